#pragma once
// What coordinate() (cluster/coordinator.hpp) takes and gives besides the
// cluster: its options and its result. The coordinator actor
// (coordinator_actor.hpp) shares them, so they live here, below both.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_addr.hpp>

#include "messages/messages.hpp"
#include "cluster/cluster_handles.hpp"
#include "cluster/shard_recovery.hpp"

namespace runtime {

class cluster_checkpointer;

// The progress hook's answer: an error that ends the job, or a cut to take
// now (the coordinator actor runs it: cluster/cut_run.hpp).
struct progress_step {
  std::optional<std::string> error;
  bool cut = false;
};

struct coordinator_options {
  bool tolerate_trainer_loss = false;
  // Called by the progress poll with the examples trained so far; an error
  // ends the job. It may ask for a checkpoint cut (cluster/cluster_cut.hpp)
  // of `checkpoints`, which the coordinator actor then takes while it goes
  // on handling its messages; no poll runs until the cut has ended.
  std::function<progress_step(std::uint64_t)> on_progress;
  // Called when that cut has ended, with its error (none: committed). An
  // error ends the job (under full recovery, rolls it back); a cut's own
  // error does so whatever on_cut answers.
  std::function<std::optional<std::string>(const std::optional<std::string>&)> on_cut;
  cluster_checkpointer* checkpoints = nullptr; // the cuts' (needed when on_progress asks one)
  // Called when training begins (the ring is wired), with the time that
  // every "at N s" of the run counts from (the fault injector's zero).
  std::function<void(caf::actor_clock::time_point)> on_started;
  // Called once every trainer's data is done, before the coordinated stop
  // (the fault injector disarms: no failures after training). It returns
  // the roles killed so far: the coordinator awaits their DOWNs (a kill
  // waits for its role's busy core) and handles them before it goes on.
  std::function<std::vector<caf::actor_addr>()> on_trained;
  // How often the progress poll runs (virtual time under sim.clock=virtual,
  // where a poll costs no simulated time).
  std::chrono::milliseconds poll_interval{200};
  // The poll runs while a cut is in flight too, counting the examples (what
  // a rollback redoes) without the caller's progress hook; the wall clock's
  // runs set it (a cut across nodes takes seconds); the virtual clock's do
  // not, so that their message order stays as recorded.
  bool poll_in_cuts = false;
  // recovery.mode=partial: puts a new embedding shard in a lost one's place
  // (cluster_handles::shards[i]); the coordinator actor has it reload its
  // newest save (cluster/shard_recovery.hpp). Unset: a lost shard ends the
  // job.
  restart_fn restart_shard;
  // recovery.mode=full: a lost role (any; the faults kill shards) ends
  // coordinate() without an error, with coordination_result::rollback set;
  // the caller rolls the cluster back (cluster/full_recovery.hpp).
  bool rollback_on_shard_loss = false;
};

// A loss under rollback_on_shard_loss: an embedding shard's, or another
// role's (a trainer failing with it, a cut that could not complete).
struct shard_loss {
  std::optional<std::size_t> shard; // the lost embedding shard, if one was
  std::string why;
  double seconds = 0;         // since training started (the coordinator's clock)
  std::uint64_t examples = 0; // trained by then (the newest progress poll)
};

struct coordination_result {
  // Each trainer's syncer, in trainer order, once the ring is wired (before
  // training starts; cuts hold them).
  std::vector<caf::strong_actor_ptr> syncers;
  std::vector<messages::trainer_report> reports; // surviving trainers, in trainer order
  std::optional<shard_loss> rollback;             // rollback_on_shard_loss: the loss
};

} // namespace runtime
