#pragma once
// The coordinator's protocol during training (steps 1-3 of coordinator.hpp)
// as an event-based typed actor. It walks the phases of
// coordinator_phases.hpp: every request is sent at once and answered through
// a continuation, DOWNs arrive through its down handler, and its waits are
// timers on the actor clock. Under sim.clock=virtual it is an actor like
// any other on the engine, unplaced (its handlers cost no simulated time).
//
//   caller -> coordinator: begin
//   1. wire     -> every trainer: peers (its syncer); the first ring (MA,
//                  BMUF) -> every syncer: peers(rank, all)
//      shards   -> every embedding shard, one after the other: an empty
//                  lookup (its tables are initialised)
//   2. train    -> caller: started(t0, syncers) (awaited); -> every trainer:
//                  start, answered when its data is done. Meanwhile a
//                  progress poll, opts.poll_interval after the coordinator's
//                  last message: -> every live trainer in turn: stats
//                  (awaited, each within min(timeout, 1 s)), then -> caller:
//                  polled(total) (awaited: (error, cut); an error ends the
//                  job or, under full recovery, rolls it back; cut: a
//                  checkpoint cut now, see "Cuts" below)
//      drain    -> caller: trained (awaited): the roles the fault injector
//                  killed; their DOWNs are awaited (cluster.timeout)
//   3. rounds   -> every trainer: sync (its round)
//      stop     -> every trainer: stop(max round + 1): the reports
//   coordinator -> caller: the outcome (coordinator_outcome); it quits.
//
// The caller (coordinate(), a blocking actor on the wall clock or the
// engine-stepping one of virtual_coordinator.hpp) serves the hooks and does
// step 4. The hooks are blocking work of the caller's: fault polls and the
// choice of a cut run in `polled`, placing a restarted shard
// (recovery.mode=partial) in `restart`. The coordinator awaits each (CAF's await: no other message
// is handled until the answer), so a hook sees the protocol as it was when
// it was asked, as when the coordinator was one blocking actor.
//
// Cuts. When `polled` answers "cut", the coordinator takes the checkpoint
// cut itself (cut_run.hpp), as continuations: it keeps handling its
// messages meanwhile, but neither polls nor moves to the next phase until
// the cut has ended; then -> caller: cut(error) (awaited; the caller
// releases the faults it held and may answer an error). A DOWN during the
// cut aborts it at once ("checkpoint: cut N aborted: shard-1 is down
// (...)"): the trainers asked so far are released, the cut's error goes to
// the caller, and the DOWN is then handled as any other. A cut's error
// ends the job, or rolls it back under full recovery; but where trainer
// losses are tolerated, a cut aborted by them ends without an error (the
// job goes on) and, once a trainer is lost, the cuts asked for later end at
// once untaken: a cut holds every trainer's replica and reader position.
// Under partial recovery an embedding shard's DOWN during a cut does not
// abort it: the shard is restarted at once (the cut in flight is over for
// the new shard), the cut goes on without it so that the live shards finish
// their part, and ends void; once the shard is back the coordinator takes a new cut,
// whose end is the one the caller hears of.
//
// Losses, as coordinator.hpp says: a shard's DOWN fails the job, or (partial
// recovery) -> caller: restart(shard, why) (awaited: the new shard in
// place); -> new shard: recover, a continuation (the coordinator handles
// its messages meanwhile, DOWNs included, but neither polls nor moves to the
// next phase until the shard is back); -> caller: restarted(shard, its
// reload) (the report's event); then the coordinator monitors the new shard
// and sends rebind(shard, handle) to every live trainer; under full recovery any loss ends the protocol with a rollback
// once the DOWNs already in its mailbox are handled. A trainer's error of
// code shard_down waits (cluster.timeout) for the shard's own DOWN, or its
// node's, to name the cause.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include "actors/interfaces.hpp"
#include "messages/messages.hpp"
#include "cluster/coordination.hpp"
#include "config/train_config.hpp"

namespace runtime {

// The coordinator's interface and atoms are in the catalogue
// (actors/interfaces.hpp, messages/messages.hpp).
using actors::coordinator_actor;

// Steps 1-3's result, the coordinator's last message to the caller.
struct coordinator_outcome {
  std::optional<std::string> failure;
  std::optional<shard_loss> rollback; // rollback_on_shard_loss
  std::vector<bool> alive;            // per trainer
  std::vector<std::string> lost;      // "trainer-1 lost after 2.5 s (why)"
  // Per trainer (default for the lost ones): the stop's reports.
  std::vector<messages::trainer_report> reports;
  double seconds = 0; // training: from start to every trainer's reply
};

// What the coordinator needs of coordinator_options (the hooks themselves
// stay with the caller).
struct coordinator_setup {
  const train_config* cfg = nullptr;
  const cluster_handles* cluster = nullptr; // the caller's; it changes only in a hook
  caf::actor caller;
  bool tolerate_trainer_loss = false;
  bool restart_shards = false; // opts.restart_shard is set
  bool rollback_on_shard_loss = false;
  bool on_trained = false;     // opts.on_trained is set
  cluster_checkpointer* checkpoints = nullptr; // opts.checkpoints: the cuts the polls ask for
  std::chrono::milliseconds poll_interval{200};
  bool poll_in_cuts = false; // opts.poll_in_cuts
};

// (The actor's code: coordinator_protocol.{hpp,cpp}, coordinator_losses.cpp.)
coordinator_actor spawn_coordinator(caf::actor_system& sys, coordinator_setup setup);

} // namespace runtime

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(runtime::coordinator_outcome)
