#pragma once
// The atoms of the cluster protocol: verbs, at most 10 characters each, part
// of the wire format. The cut's atoms are in cut_messages.hpp, the nodes' in
// node_messages.hpp.
#include <caf/atom.hpp>

namespace messages {

using lookup_atom = caf::atom_constant<caf::atom("lookup")>;     // rows for keys
using push_atom = caf::atom_constant<caf::atom("push")>;         // embedding gradients
using exchange_atom = caf::atom_constant<caf::atom("exchange")>; // EASGD elastic step
using ring_atom = caf::atom_constant<caf::atom("ring")>;         // all-reduce chunk
using next_atom = caf::atom_constant<caf::atom("next")>;         // next batch, please
using start_atom = caf::atom_constant<caf::atom("start")>;       // begin working
using stop_atom = caf::atom_constant<caf::atom("stop")>;         // finish and report
using done_atom = caf::atom_constant<caf::atom("done")>;         // finished (with stats)
using sync_atom = caf::atom_constant<caf::atom("sync")>;         // run a round now (FR)
using tick_atom = caf::atom_constant<caf::atom("tick")>;         // timer
using wake_atom = caf::atom_constant<caf::atom("wake")>;         // the batch a syncer waits for
using stats_atom = caf::atom_constant<caf::atom("stats")>;       // report counters
using dump_atom = caf::atom_constant<caf::atom("dump")>;         // full state (eval)
using save_atom = caf::atom_constant<caf::atom("save")>;         // write a checkpoint file
using peers_atom = caf::atom_constant<caf::atom("peers")>;       // ring neighbours
using end_atom = caf::atom_constant<caf::atom("end")>;           // no more data
using rebind_atom = caf::atom_constant<caf::atom("rebind")>;     // a role restarted elsewhere
using recover_atom = caf::atom_constant<caf::atom("recover")>;   // reload own checkpoint (CPR)
using sparse_atom = caf::atom_constant<caf::atom("sparse")>;     // DCT: thresholded rows wanted
using ids_atom = caf::atom_constant<caf::atom("ids")>;           // dynamic tables: rows by id
// The coordinator and its caller (cluster/coordinator_actor.hpp): the
// caller's request and the coordinator's own timers ...
using begin_atom = caf::atom_constant<caf::atom("cBegin")>;       // run steps 1-3
using poll_atom = caf::atom_constant<caf::atom("cPoll")>;         // a progress poll is due
using deadline_atom = caf::atom_constant<caf::atom("cDeadline")>; // a wait timed out
using finish_atom = caf::atom_constant<caf::atom("cFinish")>;     // DOWNs in hand: end
// ... and the hooks the coordinator asks of its caller.
using started_atom = caf::atom_constant<caf::atom("cStarted")>; // (t0 ns, syncers) -> ()
using polled_atom = caf::atom_constant<caf::atom("cPolled")>;   // (progress) -> error or ""
using trained_atom = caf::atom_constant<caf::atom("cTrained")>; // () -> killed roles
using restart_atom = caf::atom_constant<caf::atom("cRestart")>; // (shard, why, cut) -> error or ""
using restarted_atom = caf::atom_constant<caf::atom("cRestarted")>; // (shard, shard_restart)

} // namespace messages
