#pragma once
// The `train` sub-command's configuration: every option (group.key, type,
// default, help) is declared once in add_train_options(); build_train_config()
// turns the validated option_set into typed settings and checks the
// cross-option rules. config/default.ini documents the same keys.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/schema.hpp"
#include "model/arch.hpp"
#include "model/optimizer.hpp"
#include "model/sync_rules.hpp"
#include "config/checkpoint_config.hpp"
#include "config/data_config.hpp"
#include "config/dct_config.hpp"
#include "config/embedding_config.hpp"
#include "config/recovery_config.hpp"
#include "config/sim_config.hpp"
#include "config/modes.hpp"
#include "config/options.hpp"

namespace runtime {

struct train_settings {
  std::size_t batch_size = 128;
  std::size_t epochs = 1;
  std::uint64_t max_examples = 0; // 0: no limit
  std::uint64_t seed = 1;         // model initialisation
  std::size_t eval_batch_size = 4096;
  model::dense_optimizer dense;
  model::sparse_optimizer sparse;
};

struct output_settings {
  std::string metrics;               // JSON path; empty: none
  std::string config;                // effective INI path; empty: none
  // Run folder: metrics.json, timeline.csv, config.ini; empty: none.
  std::string dir;
  double timeline_seconds = 1.0;     // period of timeline.csv rows
  // The /metrics endpoint (report/metrics_endpoint.hpp): TCP port (0: off)
  // and the address it listens on.
  std::uint16_t metrics_port = 0;
  std::string metrics_address = "127.0.0.1";
  std::string progress = "auto";     // auto | live | plain | none
  double progress_seconds = 5.0;     // period of plain progress lines
  std::string log_level = "info";
};

struct cluster_settings {
  cluster_mode mode = cluster_mode::simulated;
  std::size_t trainers = 2;
  std::size_t workers = 1;            // Hogwild workers per trainer
  std::size_t embedding_shards = 2;
  std::size_t dense_shards = 1;       // cluster.dense-shards; 0 there: auto_dense_shards
  std::size_t max_threads = 0;        // scheduler threads; 0 = hardware cores
  std::size_t max_throughput = 0;     // messages an actor handles a turn; 0 = CAF's (unbounded);
                                      // scheduler.max-throughput=-1: derived_max_throughput
  scheduler_policy scheduler = scheduler_policy::stealing; // scheduler.policy
  std::chrono::milliseconds timeout{30000}; // every request between actors
  // Workers read and write the embedding shards' tables directly (wall
  // clock, one process; actors/hogwild_rows.hpp) instead of by messages.
  bool local_rows = false;
  // cluster.read-ahead: each worker asks its reader for the batch after
  // next while it trains (worker_config::read_ahead).
  bool read_ahead = false;
  // cluster.memory-limit-gib in bytes: what the up-front memory estimate must
  // fit in (memory_estimate.hpp); 0 = the machine's memory.
  double memory_limit_bytes = 0;
};

struct sync_settings {
  model::sync_algorithm algorithm = model::sync_algorithm::s_easgd;
  std::uint64_t k = 10;               // FR-*: batches between rounds (per worker)
  float alpha = 0.0f;                 // EASGD elasticity (sync.alpha, default 0.25)
  float momentum = -1.0f;             // BMUF block momentum; < 0 = 1 - 1 / trainers
  float block_lr = 1.0f;              // BMUF block learning rate
  bool nesterov = true;
  model::merge_mode merge = model::merge_mode::delta;
  std::chrono::milliseconds min_pause{0};
  std::uint64_t min_gap_batches = 1;  // shadow: batches between round starts
  runtime::eval_model eval_model = runtime::eval_model::automatic;
};

// The simulated network (cluster.mode=simulated, DESIGN.md section 6).
struct net_settings {
  bool enabled = false;
  double latency_us = 20;      // one-way, per message between hosts
  double bandwidth_gbps = 25;  // per NIC and direction
  double dilation = 0;         // 0 = auto, see effective_dilation()
};

struct train_config {
  data_settings data;
  std::string arch_name = "small";
  model::arch arch;
  train_settings train;
  cluster_settings cluster;
  sync_settings sync;
  net_settings net;
  sim_settings sim;
  output_settings output;
  checkpoint_settings checkpoint;
  recovery_settings recovery; // recovery.*, cpr.*, faults.mtbf
  model::dct_settings dct;    // dct.*
  embedding_settings embedding; // model.embedding, embedding.*
};

// net.dilation, or when it is 0: max(1, trainers x workers / scheduler
// threads), the threads being scheduler.max-threads or the hardware cores.
// cluster.local-rows' rules ("" when it is off or can run): the options it
// cannot run with. `periodic`: checkpoint cuts are asked for.
std::optional<std::string> check_local_rows(const train_config& c, bool periodic);

double effective_dilation(const train_config& c);

// The CAF scheduler threads of a wall-clock actor system: scheduler.max-threads,
// or when it is 0 the hardware cores (at least 1). CAF 0.17's own default is
// max(cores, 4), which on a 2-core machine runs 4 threads on 2 cores: the
// Hogwild workers then share cores with idle-spinning threads and are
// preempted and moved between cores (docs/RESULTS.md, 2b). Every actor
// system the project starts sets it.
// train.batch-size=0 (the default): 128 examples per worker, and with more
// than 4 trainers 4096 / trainers^2, at most 128 and at least 16 (8
// trainers: 64; 16 and more: 16): one round of batches (trainers x batch
// examples) holds 4096 / trainers, 512 at 8 trainers and 256 at 16. Each
// replica then takes enough dense steps between syncs: at 16 trainers a
// batch of 128 left every shadow method 1.6-2.9 % above the sequential
// engine's eval NE on 100 000 rows; 32 left S-EASGD and S-MA +1.3-1.4 % on
// set a's 1 600 000 rows over six seeds, 16 +0.5 %; at 8 trainers 45 was
// worse than 64 (docs/RESULTS.md 4d, 4g).
std::size_t auto_batch_size(cluster_mode mode, std::size_t trainers);

// cluster.dense-shards=0 (the default): under EASGD (shadow or foreground)
// one centre shard per 4 trainers (rounded up), else 1. One centre for 16
// trainers is busy the whole pass (dense S-EASGD, 1 600 000 rows: 1.91 of
// 1.91 virtual s), so every exchange waits in its queue and the elastic
// difference it returns is older; four shards (a quarter of the replica
// each, 27 % busy) gave eval NE +0.34 % against the sequential engine where
// one gave +0.87 % (set b, seeds 1-3; docs/RESULTS.md 4e). With dct.dp a
// DCT exchange costs the shard 5.6x a dense one, and one shard of 16
// trainers answered 1 099 rounds against dense EASGD's 5 001 (docs/dct.md).
// So with dct.dp above 4 trainers: one per trainer (at 16 trainers and the
// batch of 16, four shards were 99.5 % busy and S-EASGD lost +1.18 / +1.28 %
// against dense, sixteen +0.69 / +0.65 %: docs/dct.md).
std::size_t auto_dense_shards(std::size_t trainers, bool easgd, bool dct_dp = false);

std::size_t scheduler_threads(const train_config& c);
// std::thread::hardware_concurrency(), at least 1 (it may answer 0).
std::size_t hardware_cores();

void add_train_options(option_set& opts);
// output.progress, output.progress-seconds, output.log-level (part of the
// train options; predict and eval use them too).
void add_display_options(option_set& opts);

// What a configuration is built for: a run that trains (data.train is
// needed unless the synthetic set can stand in), or a saved model's own
// configuration read back by predict and eval (its run's files are gone).
enum class config_use { train, saved_model };

// scheduler.max-throughput=-1 (the default): 1 with sync none, fr-ma or
// fr-bmuf and more than one worker in all, else 0 (CAF's: an actor keeps
// its thread while its mailbox holds messages).
std::size_t derived_max_throughput(model::sync_algorithm a, std::size_t trainers,
                                   std::size_t workers);

// Reads the options into `out`. Returns an error message naming the key and
// the expected value when a combination of options is invalid.
std::optional<std::string> build_train_config(const option_set& opts, train_config& out,
                                              config_use use = config_use::train);

} // namespace runtime
