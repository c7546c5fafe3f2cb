#pragma once
// The result of one training run and its JSON form (DESIGN.md section 8):
// examples, seconds, examples_per_second, simulated_examples_per_second,
// train_ne, eval_*, trainers, workers_per_trainer, batch_size, a `sync` object and a
// `net` object (null without the network model), and a `checkpoint` object
// (null unless the simulated cluster cut checkpoints while training).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/metrics.hpp"

namespace runtime {

struct sync_metrics {
  std::string algorithm = "none";
  std::uint64_t rounds = 0;                 // completed rounds, summed over trainers
  std::optional<double> sync_gap_mean;      // batches between rounds; null without rounds
  std::optional<double> sync_gap_p50, sync_gap_p90, sync_gap_max;
  double worker_blocked_fraction = 0.0;     // of worker wall time, waiting for FR rounds
  std::uint64_t bytes = 0;                  // dense-sync payload bytes sent
  std::uint64_t bytes_received = 0;         // EASGD: the replies' payload bytes
};

// DCT on the dense sync (dct.dp; model/dct_sync.hpp), summed over trainers.
struct dct_metrics {
  bool ring = false; // MA/BMUF: round the ring, no replies (else EASGD)
  bool ring_reduce = false; // dct.dp-ring: the reduce (else the all-gather)
  double dp_keep = 0; // the keep in effect: dct.dp-reduce-keep with the reduce
  std::uint64_t refresh = 0;
  bool error_feedback = true;
  std::uint64_t rounds = 0;
  std::uint64_t bytes = 0;       // payload bytes both ways (exchanges and replies)
  std::uint64_t dense_bytes = 0; // what dense EASGD sends for the same rounds, both ways
  double sent_fraction = 0;      // entries of the replicas' changes sent
  double reply_fraction = 0;     // entries of d replied
  std::uint64_t refreshes = 0;   // the syncers' threshold estimates
  double reduction() const { return bytes ? double(dense_bytes) / double(bytes) : 0; }
  double bytes_per_round() const { return rounds ? double(bytes) / double(rounds) : 0; }
};

// DCT on the embedding traffic (dct.mp; model/dct_mp.hpp), summed over
// workers. Bytes are payloads: the rows of lookup replies, the keys and
// gradients of pushes (a lookup request's keys, 8 bytes each, are the same
// either way and not counted).
struct dct_mp_metrics {
  double keep = 0;
  std::string backward;   // mask | straight
  double grad_keep = 0;   // straight only
  bool error_feedback = false; // straight only
  std::uint64_t refresh = 0;
  std::uint64_t examples = 0;
  std::uint64_t lookup_bytes = 0, lookup_dense_bytes = 0; // replies; what dense rows take
  std::uint64_t push_bytes = 0, push_dense_bytes = 0;     // pushes; what dense pushes take
  double row_fraction = 0;     // row entries sent of those looked up
  double grad_fraction = 0;    // gradient entries pushed of those of the rows
  std::uint64_t refreshes = 0; // the shards' threshold estimates
  std::uint64_t bytes() const { return lookup_bytes + push_bytes; }
  std::uint64_t dense_bytes() const { return lookup_dense_bytes + push_dense_bytes; }
  double reduction() const { return bytes() ? double(dense_bytes()) / double(bytes()) : 0; }
  double bytes_per_example() const { return examples ? double(bytes()) / double(examples) : 0; }
};

// Payload bytes per link type (simulated and multi-node modes).
struct link_bytes {
  std::uint64_t lookup = 0;     // embedding rows, shard -> worker
  std::uint64_t push = 0;       // embedding gradients, worker -> shard
  std::uint64_t dense_sync = 0; // EASGD ranges and ring chunks
};

// The network model of the simulated cluster (net.enabled).
struct net_metrics {
  double latency_us = 0;
  double bandwidth_gbps = 0;
  double dilation = 1;        // simulated time runs this many times slower than wall time
  std::uint64_t bytes = 0;    // bytes that crossed between simulated hosts
  std::uint64_t messages = 0; // messages that crossed between simulated hosts
  // Per host: seconds its NIC spent sending / receiving, and the simulated
  // time they are a part of (virtual seconds, or wall seconds x dilation).
  std::vector<double> tx_busy_seconds, rx_busy_seconds;
  double span_seconds = 0;
  // Per host: the busier direction's share of span_seconds.
  std::vector<double> utilisation() const;
};

// Checkpoints written while the simulated cluster trained: whole-cluster
// cuts (cluster/cluster_cut.hpp) and the embedding shards' own CPR saves
// (recovery.mode=partial; their detail is in recovery_metrics).
struct checkpoint_metrics {
  std::uint64_t count = 0;          // cuts + shard_saves
  std::uint64_t cuts = 0;
  std::uint64_t shard_saves = 0;
  std::uint64_t bytes = 0;          // written, summed
  double seconds = 0;               // cuts from request to commit, saves' storage time, summed
  // The store's share of training time: a cut's seconds over the training
  // seconds (an upper bound: its files are written while training goes on),
  // and a shard's save over the training seconds of all the shards (the
  // save holds its shard's handler), summed.
  double overhead_fraction = 0;
  double max_pause_seconds = 0;     // the longest worker pause of any cut
  std::uint64_t pushes_held = 0;    // pushes that waited for a shard's alignment
  std::uint64_t rows_copied = 0;    // rows copied on write while files were written
};

// Partial recovery of embedding shards (recovery.mode=partial; CPR,
// cluster/shard_recovery.hpp) and the shards' own saves.
struct recovery_metrics {
  std::string mode = "partial";
  std::string policy = "full";       // cpr.policy
  double fraction = 1;               // cpr.fraction (mfu, ssu)
  double interval_seconds = 0;       // between a shard's saves
  double target_pls = 0;             // 0: the interval was given
  double mtbf_seconds = 0;           // the interval's MTBF, if any
  std::uint64_t failures = 0;
  std::vector<std::string> events;   // each failure and its recovery
  double lost_examples = 0;          // examples since the lost shard's save / shards
  double pls = 0;                    // lost_examples / examples
  std::optional<double> predicted_pls; // interval / (2 x MTBF x shards), with an MTBF
  std::uint64_t redone_examples = 0; // partial recovery redoes nothing
  double outage_seconds = 0;         // from a failure to its shard's rebind, summed
  // The shards' saves and reloads (all shards, restarted ones included).
  // Multi-node runs do not gather them from the shard nodes (a killed
  // node's counts die with it): saves_counted = false, the JSON has null.
  bool saves_counted = true;
  std::uint64_t saves = 0, full_saves = 0, rows_saved = 0, bytes = 0, failed_saves = 0;
  double save_seconds = 0;           // storage time (virtual: bytes / storage bandwidth)
  std::uint64_t loads = 0, load_bytes = 0;
  double load_seconds = 0;
  std::uint64_t tracking_bytes = 0;  // the policy's bookkeeping, the largest shard's
  // (save + load seconds) / (training seconds x shards): the share of the
  // shards' time spent on the store, the paper's overhead without redone work
  double overhead_fraction = 0;
};

// The virtual-time cluster (sim.clock=virtual; sim/virtual_time.hpp).
struct sim_metrics {
  double virtual_seconds = 0;        // the whole run, evaluation included
  std::uint64_t handlers = 0;        // events: message handlers run
  double busy_core_seconds = 0;      // core time charged, all hosts
  std::vector<double> host_busy_seconds; // per host
  std::size_t cores_per_host = 1;
  // Per role (the actor's name less its indices: "worker", "embedding-shard"):
  // its handlers' core time and count. The sides of a remote message
  // (sim.remote-*) are in the host's time, not here.
  // With sim.cost=measured (`measured`) also the model's price of the same
  // handlers (sim.message-us each plus their counted work), and the handlers
  // that counted no work ("bare": a reply taken, a message passed on) apart,
  // measured (sim/virtual_time.hpp); and how the measured time of the
  // handlers that counted work spreads around the model's price: over them,
  // weighted by the price w, the sums of w, w x r and w x r^2 of the ratio r
  // = measured / price (cost_cv(): their coefficient of variation).
  struct role_busy {
    double seconds = 0;
    std::uint64_t handlers = 0;
    double model_seconds = 0;
    // Of model_seconds, the arithmetic priced at sim.gflops (the rest: the
    // memory traffic, the rows, message-us).
    double flops_seconds = 0;
    std::uint64_t bare_handlers = 0;
    double bare_seconds = 0;
    double ratio_weight = 0, ratio_sum = 0, ratio_sq_sum = 0;
    // The spread of r over its weighted mean (0: no handler counted work).
    double cost_cv() const;
  };
  std::map<std::string, role_busy> busy_by_role;
  bool measured = false;
  // Where the cost constants came from (sim_settings::constants): the
  // summary's "constants:" line; the JSON's sim.constants only when
  // sim.calibration was given (`calibrated`), so that a run on the built-in
  // defaults keeps its metrics bytes (the regression oracle's hashes).
  std::string constants = "built-in defaults";
  bool calibrated = false;
  // Per host: busy core time over (virtual seconds x cores).
  std::vector<double> core_utilisation() const;
};

// Dynamic embedding tables (model.embedding=dynamic; model/dynamic_table.hpp):
// the tables at the end of training and what happened to them. Lookups count
// every id of every field (a bag's ids each); `missing` those of ids without
// a row, which read zeros.
struct embedding_metrics {
  std::uint64_t max_rows = 0, admit_after = 0, ttl = 0;
  std::vector<std::uint64_t> rows; // per table
  std::uint64_t admissions = 0, evictions = 0, expired = 0; // expired: by ttl, in evictions
  std::uint64_t lookups = 0, missing = 0;                   // training
  std::uint64_t eval_lookups = 0, eval_missing = 0;         // evaluation
  std::uint64_t bytes = 0; // rows, optimiser state, maps and sketches
};

// Hashed tables with embedding.collisions (model/collision_counter.hpp):
// training lookups, those whose row also serves another id of the run, and
// the rows looked up and shared.
struct collision_metrics {
  std::uint64_t lookups = 0, shared_lookups = 0, used_rows = 0, shared_rows = 0;
};

struct run_metrics {
  std::string mode = "sequential";
  std::string arch;
  std::size_t batch_size = 0;      // the batch each worker trains on (train.batch-size or derived)
  std::uint64_t examples = 0;
  double seconds = 0;               // training time, wall or virtual (excludes evaluation)
  double train_ne = 0;              // progressive, before each update
  std::optional<model::eval_result> eval;
  std::optional<double> eval_bayes_ne; // from the eval file's .meta.json, if any
  double eval_seconds = 0;
  std::uint64_t malformed_lines = 0;
  std::uint64_t eval_malformed_lines = 0;
  std::uint64_t cut_bags = 0;      // multi-hot bags cut to data.max-ids (training, all passes)
  std::uint64_t eval_cut_bags = 0; // ... in the eval set
  std::size_t trainers = 1;
  std::size_t workers_per_trainer = 1;
  double flops_per_example = 0;
  sync_metrics sync;
  link_bytes bytes;
  std::string eval_model = "trainer0";            // which dense parameters were evaluated
  std::vector<double> trainer_examples_per_second;
  double lookup_wait_fraction = 0;                // of worker wall time, waiting for rows
  // The Hogwild workers' own accounting, summed over all of them (cluster
  // modes): thread CPU time preparing and training batches, the part of it
  // in the dense step on the shared replica, and how many batches ran on
  // another scheduler thread than the worker's previous one. Absent in
  // sequential mode and under the virtual clock (whose metrics replay to
  // the bit, and CPU time does not).
  struct worker_totals {
    double cpu_seconds = 0;
    double dense_step_cpu_seconds = 0;
    std::uint64_t thread_moves = 0;
    std::uint64_t batches = 0;
    // The CAF scheduler threads they ran on (the one-process cluster; 0:
    // not known, multi-node).
    std::size_t scheduler_threads = 0;
  };
  std::optional<worker_totals> workers;
  std::optional<net_metrics> net;                 // set when the network model was on
  std::optional<checkpoint_metrics> checkpoint;   // cuts of the running cluster, if any
  std::optional<sim_metrics> sim;                 // set under the virtual clock
  std::optional<recovery_metrics> recovery;       // recovery.mode=partial
  std::optional<dct_metrics> dct;                 // dct.dp
  std::optional<dct_mp_metrics> dct_mp;           // dct.mp
  std::optional<embedding_metrics> embedding;     // model.embedding=dynamic
  std::optional<collision_metrics> collisions;    // hashed, embedding.collisions
  // Network model only: throughput with per-host virtual time. Each worker's
  // time = its thread CPU time + (lookup waits + sync waits) / dilation, as if
  // every trainer had its own host; summed over trainers. Unlike wall x
  // dilation it charges blocked time to the blocked trainer even when the
  // shared cores ran other actors meanwhile.
  std::optional<double> host_examples_per_second;
  // Multi-node: trainers lost during the run ("trainer 1 on node t1 lost
  // after 3.2 s (...)"); the job finished with the others.
  std::vector<std::string> lost_trainers;
  // "SIGTERM" / "SIGINT" when a signal stopped training early (stop_signal.hpp):
  // the figures are those of the examples trained until then.
  std::optional<std::string> stopped_by;
  // Simulated cluster: the injected faults carried out (faults.*), in order.
  std::vector<std::string> faults;

  double examples_per_second() const { return seconds > 0 ? double(examples) / seconds : 0; }
  // Wall examples/s x dilation: the throughput of the simulated hosts
  // (network model only; nullopt without it).
  std::optional<double> simulated_examples_per_second() const {
    if (!net)
      return std::nullopt;
    return examples_per_second() * net->dilation;
  }
  double gflops() const { return examples_per_second() * flops_per_example / 1e9; }
};

std::string to_json(const run_metrics& m);
// A few human-readable lines for the end of a run.
std::string summary(const run_metrics& m);

} // namespace runtime
