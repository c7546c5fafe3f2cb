#pragma once
// trainer: owns one dense replica (hogwild_replica) and the actors that work
// on it: its reader, its shadow syncer and W Hogwild workers.
//
// Lifecycle:
//   spawn   create the replica from initial_params, spawn reader, syncer and
//           workers (all monitored, as are the embedding shards); peers_atom
//           works from here on (ring wiring before start)
//   start   -> syncer: start; -> each worker: start. The reply (the workers'
//           worker_stats summed) comes when every worker sent done_atom; the
//           syncer then gets end_atom.
//   stats   progress_report: examples and batches from the replica's atomics,
//           the loss so far from the workers' live_progress, and the syncer's
//           rounds (asked with stats_atom; the last known value on error)
//   sync    the syncer's completed rounds (its stats_atom)
//   stop    -> syncer: stop(last_round); reply trainer_report{trainer, summed
//           worker stats, sync stats, replica snapshot}. The reader is stopped
//           then; the syncer stays up (ring peers may still need it, see
//           shadow_syncer.hpp) until the trainer itself exits.
//   exit    an exit message with a non-normal reason answers the pending
//           start/stop replies with trainer_down and ends the trainer.
//           Whenever the trainer terminates, for any reason, it sends exit
//           (user_shutdown) to every actor it spawned, so none outlives it.
//   A stop before the workers are done ends the workers first; the pending
//   start reply then gets the stats of the workers that had finished.
//
// Checkpoint cut (cut_atom N, last_round -> cut_report; trainer_cut.cpp):
//   -> syncer: hold(last_round); -> each worker still training: cut(N)
//   <- syncer: sync_hold; <- each worker: parked(N) (or its done)
//   -> reader: where; then the replica and its optimiser state are copied
//   -> workers: resume(N); reply cut_report (the syncer stays held)
//   resume (from the coordinator, once the cut is written) -> syncer: resume
// The workers wait from their park to the copy: the cut's only pause.
//
// Failures: a DOWN with a non-normal reason from the syncer at any time, or
// from a worker, the reader or an embedding shard before training ended, fails
// the trainer: the pending start (and stop) reply gets
//   make_error(code, "trainer-T: <who> failed: <reason>")
// (code: shard_down for a shard; for the others the child's own project error
// code when it has one, e.g. a worker's shard_down or input_error, else
// trainer_down), the error is logged, and the trainer quits with it. Normal
// exits are fine. Every request has cfg.timeout.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/typed_response_promise.hpp>

#include "actors/hogwild_replica.hpp"
#include "actors/hogwild_worker.hpp"
#include "actors/interfaces.hpp"
#include "actors/work.hpp"
#include "actors/reader.hpp"
#include "actors/shadow_syncer.hpp"
#include "model/arch.hpp"
#include "model/optimizer.hpp"

namespace caf {
class actor_system;
}

namespace actors {

struct trainer_config {
  std::uint32_t trainer = 0;
  std::size_t workers = 1;
  model::arch arch;
  model::dense_optimizer dense_opt;
  std::vector<float> initial_params; // the replica's start (identical on all trainers)
  std::vector<float> initial_state;  // its dense optimiser state; empty = zero
  reader_config reader;              // this trainer's part of the data
  std::vector<embedding_shard_actor> shards;
  syncer_config syncer;              // replica field filled in by the trainer
  std::uint64_t sync_every = 0;      // FR methods: k (0 = never)
  std::chrono::milliseconds timeout{30000};
  bool detached_workers = false;     // spawn the workers detached (own threads)
  // The simulated host (actors::spawn_role) the trainer and its children
  // run on; what that costs is its actor system's business (sim_host.hpp).
  std::size_t host = 0;
  // recovery.mode=partial: a shard going down is not a failure; its restart
  // comes as rebind_atom, passed on to the workers.
  bool shard_restarts = false;
  // cluster.local-rows: per shard, its tables for the workers' direct
  // access (worker_config::local_rows); empty: lookups and pushes.
  std::vector<rows_ptr> local_rows;
  bool read_ahead = false; // worker_config::read_ahead
  // model.embedding=dynamic: the workers ask for rows by (table, id)
  // (worker_config::dynamic).
  bool dynamic = false;
  // worker_config::mp_residual_rows.
  std::uint64_t mp_residual_rows = 0;
  // Who may send what to it, its syncer and its workers (multi-node: filled
  // by the node agent from the plan).
  authority who;

  // Test seams: when set, called instead of spawning the real reader/syncer
  // (the trainer monitors and stops what they return like its own).
  std::function<reader_actor(caf::actor_system&)> spawn_reader;
  std::function<syncer_actor(caf::actor_system&, const syncer_config&)> spawn_syncer;
};

// One checkpoint cut in progress at a trainer (trainer_cut.cpp).
struct trainer_cut {
  std::uint64_t id = 0;
  caf::typed_response_promise<messages::cut_report> promise;
  std::vector<char> parked;     // per worker: parked (or done) for this cut
  std::size_t waiting = 0;      // workers not parked yet
  bool held = false;            // the syncer replied to hold
  messages::sync_hold hold;
  role_time began;
};

// A peer the trainer monitors: its role (worker, reader, syncer or
// embedding_shard) and, for a worker or a shard, its index.
struct trainer_peer {
  peer_role role = peer_role::none;
  std::size_t index = 0;
};

struct trainer_state {
  std::string name = "trainer"; // "trainer-T" once configured
  trainer_config cfg;
  replica_ptr replica;
  std::shared_ptr<live_progress> progress;
  reader_actor reader;
  syncer_actor syncer;
  std::vector<worker_actor> workers;
  std::vector<char> worker_done;   // per worker: done_atom received
  std::size_t workers_done = 0;
  messages::worker_stats total;    // summed over the workers that reported
  std::uint64_t rounds = 0;        // the syncer's rounds, last known
  bool started = false;
  role_time started_at; // when start_atom came (live worker time)
  bool trained = false;            // every worker reported (or stop ended them)
  bool failed = false;
  caf::typed_response_promise<messages::worker_stats> start_promise;
  caf::typed_response_promise<messages::trainer_report> stop_promise;
  std::optional<trainer_cut> cut;

  // Which of its children or shards `who` is (role none: a stranger).
  trainer_peer identify(const caf::actor_addr& who) const;
  // Its name in logs and errors: "worker-T-W", "reader", "syncer",
  // "embedding-shard-S" ("" for a stranger).
  std::string name_of(const trainer_peer& p) const;
};

// The behaviour. Spawn options for the trainer itself are the caller's.
trainer_actor::behavior_type trainer(trainer_actor::stateful_pointer<trainer_state> self,
                                     trainer_config cfg);

// Live progress: examples and batches from the replica's atomics, the loss
// so far from the workers' live_progress, the syncer's rounds last known.
// now: the actor clock's (virtual time in sim.clock=virtual).
messages::progress_report progress_of(const trainer_state& st,
                                      role_time now);

// Adds x's counters to `into` (all fields are sums).
void accumulate(messages::worker_stats& into, const messages::worker_stats& x);

} // namespace actors
