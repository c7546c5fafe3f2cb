#pragma once
// hogwild_worker: trains one trainer's shared dense replica without locks
// (Hogwild) on the batches of its reader, one mini-batch per message.
//
// Per batch i (DESIGN.md section 2):
//   reader  -> next_atom                       (batch i, request)
//   ... batch i in; once no batch is in flight (batch i-1's rows all in):
//   shard s -> lookup_atom, lookup_request     (ONE per shard with keys, de-duplicated)
//   ... all rows of batch i in:
//   reader  -> next_atom                       (batch i+1: prefetch; with
//                                               cluster.read-ahead it went
//                                               out before batch i-1 computed)
//   ... batch i+1 in: its lookups go out (with read-ahead, after the request
//   for batch i+2), THEN batch i is computed:
//   forward_backward on replica->params() (racy reads, by design)
//   dense optimiser on the replica (racy writes, by design)
//   shard s -> push_atom, embedding_grads      (ONE per shard, same keys as the lookup)
//   FR only, every sync_every batches: syncer -> sync_atom; nothing else
//   starts until its reply (the wait is worker_stats::blocked_seconds)
// So the shards' latency for batch i+1 hides behind the computation of batch
// i, and with read-ahead the reader's for batch i+2 too; at most one batch
// is in flight ahead, and with read-ahead one more (staged) waits with its
// lookups not sent (actors/worker_pipeline.hpp). At the end of data (an empty
// batch) the worker sends done_atom + worker_stats to its trainer and quits
// normally.
//
// Shard restarts (cfg.shard_restarts, recovery.mode=partial): the worker
// monitors its shards. A lookup whose shard is gone (request_receiver_down,
// or the shard's DOWN while the lookup is out: a remote shard's node died)
// waits for rebind_atom with the shard's new handle and is then sent again;
// pushes sent to the dead shard are lost, which is what partial recovery
// accepts. From the shard's DOWN until its rebind, a new lookup for it is
// not sent at all (a dead remote shard's proxy drops it without an error,
// and it would run out cfg.timeout while the shard is restarted, under load
// longer than that): it waits for the rebind like the others. The wait is
// bounded by the coordinator's restart deadline (multi-node:
// deploy.startup-timeout-ms), past which it ends the job.
//
// Failures: every request has cfg.timeout. A failed request (a dead shard:
// shard_down; no answer: request_timeout; a reader error or a malformed
// batch: input_error; bad rows: bad_request) is logged with spdlog::error and
// the worker quits with that error, context "worker-T-W: <peer>: <error>",
// so its trainer's down handler reports it.
// On the wall clock the timeout is the worker's own watchdog, not CAF's:
// a CAF request timeout is an entry in the actor clock, and each one wakes
// the clock's thread, three times a batch, which on two cores takes turns
// with the workers (docs/RESULTS.md, section 2b). The requests go without
// one, the worker notes when each went out, and a tick every cfg.timeout / 4
// fails the worker (request_timeout, "no reply to ... within T ms") once a
// request has waited cfg.timeout: a timeout fires after T to 1.25 T. A
// lookup waiting for its shard's restart is not a request in flight. On the
// virtual clock the requests keep CAF's timeouts (what the replayed metrics
// were made with).
//
// The simulated network (cluster.mode=simulated with net.enabled) is not the
// worker's business: the transport of its actor system delays its lookups,
// replies and pushes (sim/network_model.hpp), keeping their order.
//
// Checkpoint cut N (cut_atom from the trainer; cluster/cluster_cut.hpp): the
// worker requests no new batch, trains the batches it holds (the one ready
// and the one whose rows are on the way), then sends cut_atom N to every
// shard after its last push (per-pair FIFO: the shard applies every push of
// the examples before the cut, and holds back later ones until it has
// aligned), tells its trainer parked_atom N, and waits for resume_atom N.
// So every batch the reader served before the cut is trained and pushed, and
// none after it is started. FR methods: a drain does not wait for a pending
// round (the syncer is held until the cut is written), and a round that
// falls due while draining is requested at the resume; so during a cut a
// worker may train the batches in hand before its round completes. At its end of data the worker sends end_atom to every shard (it
// then counts as marked for any cut).
//
// Local rows (cfg.local_rows, cluster.local-rows: shards in the same
// process, wall clock): a batch's rows are gathered straight from the
// shards' tables when it arrives (where its lookups would go out), and its
// row gradients applied straight to them after its computation (where its
// pushes would go), lock-free (hogwild_rows.hpp). The pipeline is the same;
// nothing crosses, so lookup_bytes and push_bytes stay 0.
//
// Statistics: busy_seconds (wall, start to end of data), blocked_seconds (FR
// sync waits), lookup_wait_seconds (from the end of a computation, or of a
// sync wait, until the next batch's rows were all in), lookup_bytes (row
// floats received), push_bytes (keys + gradient floats sent).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/authority.hpp"
#include "actors/hogwild_replica.hpp"
#include "actors/hogwild_rows.hpp"
#include "actors/interfaces.hpp"
#include "actors/work.hpp"
#include "actors/worker_batch.hpp"
#include "model/arch.hpp"
#include "model/dct_mp.hpp"
#include "model/dlrm.hpp"
#include "model/optimizer.hpp"
#include "model/sync_rules.hpp"

namespace actors {

// The training loss of one trainer's workers so far, for the trainer's live
// progress reports (train NE while training; worker_stats only come at the
// end). Real atomics, updated once per batch, so no Hogwild race here.
// Also live counters for the timeline: sync wait time and bytes (workers),
// and the dense sync bytes its syncer sent (syncer_config::sent_bytes).
struct live_progress {
  std::atomic<double> loss_sum{0}, prob_sum{0};
  std::atomic<std::uint64_t> positives{0};
  std::atomic<std::uint64_t> blocked_ns{0};      // workers waiting for FR rounds
  std::atomic<std::uint64_t> sync_bytes{0};      // the syncer's bytes_sent
  std::atomic<std::uint64_t> read_bytes{0};      // the reader's bytes of lines, all passes
  // Embedding bytes by shard (index = shard): rows received, gradients pushed.
  std::vector<std::atomic<std::uint64_t>> shard_lookup_bytes, shard_push_bytes;
  explicit live_progress(std::size_t shards = 0)
    : shard_lookup_bytes(shards), shard_push_bytes(shards) {}
  static void count(std::vector<std::atomic<std::uint64_t>>& v, std::size_t s, std::uint64_t b) {
    if (s < v.size())
      v[s].fetch_add(b, std::memory_order_relaxed);
  }
  void add(double loss, double prob, std::uint64_t pos) {
    add_to(loss_sum, loss);
    add_to(prob_sum, prob);
    positives.fetch_add(pos, std::memory_order_relaxed);
  }

private:
  static void add_to(std::atomic<double>& a, double x) { // fetch_add for double is C++20
    double old = a.load(std::memory_order_relaxed);
    while (!a.compare_exchange_weak(old, old + x, std::memory_order_relaxed))
      ;
  }
};

struct worker_config {
  std::uint32_t trainer = 0, worker = 0; // ids for logs: "worker-<trainer>-<worker>"
  model::arch arch;
  model::dense_optimizer dense_opt;          // its warm-up counts the trainer's examples:
  std::uint64_t examples_before = 0;         // those before a resume, then the replica's
  replica_ptr replica;                       // shared with the other workers and the syncer
  reader_actor reader;
  std::vector<embedding_shard_actor> shards; // shard s owns keys whose row % E == s
  syncer_actor syncer;                       // FR: sync_atom every k batches
  model::sync_algorithm algorithm = model::sync_algorithm::none;
  std::uint64_t sync_every = 0;              // k for FR methods (0 = never)
  std::chrono::milliseconds timeout{30000};  // every request
  // (named trainer_handle: `trainer` is the id above)
  trainer_actor trainer_handle;              // gets done_atom + worker_stats at the end
  std::shared_ptr<live_progress> progress;   // optional: per-batch loss for progress reports
  // recovery.mode=partial: a lookup that finds its shard gone waits for the
  // shard's restart (rebind_atom) instead of failing the worker.
  bool shard_restarts = false;
  // dct.mp (model/dct_mp.hpp): lookups ask for thresholded rows; pushes
  // carry the gradients of the entries received (mask), or thresholded
  // gradients with per-row error feedback (mp_straight).
  model::dct_settings dct;
  // cluster.local-rows: per shard, its tables for direct Hogwild access
  // (hogwild_rows.hpp); a batch's rows are gathered and its row gradients
  // applied without lookups or pushes. Empty: messages.
  std::vector<rows_ptr> local_rows;
  // cluster.read-ahead: the request for the batch after next goes out while
  // the ready batch trains (actors/worker_pipeline.hpp, rule 5).
  bool read_ahead = false;
  // model.embedding=dynamic: rows are asked for by (table, id), from shard
  // model::id_owner(id) (worker_batch.hpp).
  bool dynamic = false;
  // dct.mp straight with error feedback: the most rows the worker keeps a
  // residual of (0: no bound). With dynamic tables the tables' rows in all
  // (model::dct_row_residuals::set_capacity): an id the tables evicted and
  // that never comes back would hold its residual for ever.
  std::uint64_t mp_residual_rows = 0;
  // Who may direct it: its trainer's process or the coordinator's node.
  authority who;
};

// The worker's life and its part in a checkpoint cut (worker_state).
enum class worker_phase { created, running, finished };
enum class cut_phase { none, draining, parked };
// The worker's input: it may ask the reader for a batch (open), has asked
// (asked), or the reader said there is no more (ended).
enum class input_phase { open, asked, ended };

struct worker_state {
  using clock_type = role_clock;

  std::string name = "hogwild-worker"; // "worker-T-W" once configured
  worker_config cfg;
  std::unique_ptr<model::dlrm> net;
  model::workspace ws;            // forward/backward scratch, reused
  std::vector<float> grads;       // [layout size], the dense gradient of one batch
  std::vector<float> grad_unique; // [unique rows * dim]
  worker_batch slots[2];          // batch seq uses slots[seq % 2]
  worker_stats stats;
  // dct.mp scratch: a decoded reply or push; one shard's rows (mask) and
  // gradients for a push.
  model::sparse_vector mp_vec;
  std::vector<float> mp_rows, mp_grads;
  // dct.mp-backward=straight: the gradients' per-table thresholds and what
  // was not sent of each row's gradient.
  std::optional<model::dct_row_thresholds> mp_grad_tau;
  std::optional<model::dct_row_residuals> mp_residual;
  // Dynamic tables: a reply's row marks, and one shard's at a push.
  model::row_marks mp_marks;
  std::vector<std::uint8_t> mp_row_marks;

  // The worker's two state machines (transitions in hogwild_worker.cpp):
  //   life: created --start--> running --finish or a failure--> finished;
  //   cut:  none --cut N--> draining --park--> parked --resume N--> none,
  //         in any life phase but finished (a worker not yet started parks
  //         at once: nothing in hand).
  worker_phase phase = worker_phase::created;
  cut_phase cutting = cut_phase::none;
  std::uint64_t cut_id = 0; // the cut drained or parked for (cutting != none)
  bool finished() const { return phase == worker_phase::finished; }

  // Pipeline (at most one batch ready, one in flight and one staged;
  // actors/worker_pipeline.hpp).
  std::uint64_t next_seq = 0;            // sequence number of the next reader request
  std::optional<std::uint64_t> staged;   // staged_batch came from the reader, lookups not out
  messages::example_batch staged_batch;
  std::optional<std::uint64_t> inflight; // slots[*inflight % 2] has lookups out
  std::optional<std::uint64_t> ready;    // slots[*ready % 2] has all rows, not computed yet
  input_phase input = input_phase::open;
  bool sync_pending = false;             // FR: waiting for the syncer's reply
  bool sync_owed = false; // FR: a round fell due while draining; asked at the resume

  // Shard restarts (cfg.shard_restarts): per shard, the batches whose lookup
  // waits for the new handle, and the generation of its handle: bumped when
  // the shard goes down (its DOWN) and when a new handle comes (rebind), so
  // the replies and errors of lookups sent before are ignored. A remote
  // shard's in-flight lookups get no error when its node dies (only a
  // timeout, much later): the DOWN is what sends them again.
  std::vector<std::vector<std::uint64_t>> awaiting;
  std::vector<std::uint64_t> lookup_gen;
  std::vector<char> shard_down; // per shard: its handle is gone, the rebind not yet in

  clock_type::time_point started;
  clock_type::time_point sync_sent;
  clock_type::time_point reader_sent;
  std::vector<clock_type::time_point> lookup_sent[2]; // per slot, per shard
  // dct.mp-push-places: per slot, per shard, lookup_gen when its rows came.
  // A push names its rows by place only to the handle that answered.
  std::vector<std::uint64_t> rows_gen[2];
  // Set at the end of a computation (moved to the end of a sync wait), not
  // yet charged as lookup wait: the worker waits for rows since then.
  std::optional<clock_type::time_point> idle_since;
  std::thread::id last_thread;       // the scheduler thread of the last batch (stats.thread_moves)

  // How the fabric runs handlers (actors/work.hpp), read at the start.
  execution exec;
  // A batch's dense step, computed into `grads`, lands at the end of its
  // handler (at_handler_end, actors/sim_host.hpp): on real cores at once;
  // where the fabric runs a handler at its start event, at its end event, so
  // the trainer's other workers running meanwhile see the replica without
  // it. Set until it has landed (apply_pending).
  bool apply_pending = false;
  // Where each CAF timeout wakes a clock thread (execution::timers_wake_threads;
  // CAF 0.17 keeps each request's timer until it fires), requests carry none:
  // a tick of the worker's own checks them.
  bool watchdog() const { return exec.timers_wake_threads; }

  bool sync_due() const {
    return model::is_foreground(cfg.algorithm) && cfg.sync_every > 0 &&
           stats.batches % cfg.sync_every == 0;
  }
};

// The behaviour; `start_atom` begins the loop. Spawn options (detached or
// not) are the caller's choice.
worker_actor::behavior_type hogwild_worker(worker_actor::stateful_pointer<worker_state> self,
                                           worker_config cfg);

} // namespace actors
