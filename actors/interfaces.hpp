#pragma once
// The protocol catalogue: every actor role's typed interface, one line per
// handler. Message structs and atoms are in messages/messages.hpp.
//
//  reader --batches--> hogwild_worker xW --lookup--> embedding_shard xE
//                          |   ^  (one trainer)  <--rows--    ^
//                          |   |                 --push-->    |
//                          v   |
//                 hogwild_replica (shared dense buffer, actors/hogwild_replica.hpp)
//                          ^   |
//                          |   v
//                 shadow_syncer --exchange--> dense_shard xD   (S/FR-EASGD)
//                               --ring--> next syncer          (S/FR-MA, S/FR-BMUF)
#include <cstdint>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/replies_to.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/typed_actor.hpp>

#include "messages/cut_messages.hpp"
#include "messages/messages.hpp"
#include "messages/node_messages.hpp"

namespace actors {

using namespace messages; // atoms and structs of the protocol

// The roles of this catalogue, as an actor that monitors one names it: the
// failure class of a DOWN follows from the role, never from a name (a
// trainer's: trainer.cpp). none: not a peer the watcher knows.
enum class peer_role : std::uint8_t {
  none,
  embedding_shard,
  dense_shard,
  reader,
  worker,
  syncer,
  trainer,
};

// Owns rows (row mod E == shard) of every table with their optimiser state.
using embedding_shard_actor = caf::typed_actor<
  // rows of the requested keys, dim floats each, in request order
  caf::replies_to<lookup_atom, lookup_request>::with<embedding_rows>,
  // apply summed gradients with the shard's sparse optimiser (fire and forget)
  caf::reacts_to<push_atom, embedding_grads>,
  // DCT (dct.mp, model/dct_mp.hpp): the rows with only the entries above
  // their table's threshold, and a push of the gradients of those entries
  caf::replies_to<lookup_atom, sparse_atom, lookup_request>::with<sparse_rows>,
  caf::reacts_to<push_atom, sparse_grads>,
  // the shard's whole local table, [local rows * dim] (evaluation)
  caf::replies_to<dump_atom>::with<float_blob>,
  // model.embedding=dynamic: every row the shard holds, keys as (table, id)
  // pairs with dim floats each in `grads` (evaluation)
  caf::replies_to<dump_atom, ids_atom>::with<embedding_grads>,
  // model.embedding=dynamic: the tables' counters (metrics): rows per table,
  // then admissions, evictions, expired, lookups, missing, bytes
  caf::replies_to<stats_atom, ids_atom>::with<key_blob>,
  // write the shard's rows and optimiser state as FOLDER/embedding-S.bin
  // (checkpoint/model_files.hpp) as they are now; reply the file's name,
  // bytes and CRC32C once written (by a thread on the wall clock)
  caf::replies_to<save_atom, std::string>::with<std::string, std::uint64_t, std::uint32_t>,
  // the same file sent instead of written (a multi-node export): its bytes
  // from OFFSET, at most 4 MiB a reply; offset 0 takes the file's image, each
  // request asks for the next offset (cluster/shard_fetch.hpp)
  caf::replies_to<save_atom, std::uint64_t>::with<file_chunk>,
  // checkpoint cut (cluster/cluster_cut.hpp): the coordinator's request for
  // cut N into FOLDER, aligned over that many workers; the reply comes once
  // the file is written (in the background, copy-on-write)
  caf::replies_to<cut_atom, std::uint64_t, std::string, std::uint32_t>::with<shard_cut_file>,
  // ... aligned over these workers only, each named "ID@NODE" (CAF's
  // to_string of its handle: a handle sent back to its own node arrives null
  // unless that node registered it); a cut after a trainer's loss: the lost
  // trainer's workers never mark, and may have ended before the loss
  caf::replies_to<cut_atom, std::uint64_t, std::string, std::vector<std::string>>::with<
    shard_cut_file>,
  // multi-node: cut N asked with FOLDER "" keeps the file in memory; its bytes
  // from OFFSET, as save(offset) sends them (cluster/shard_fetch.hpp)
  caf::replies_to<cut_atom, std::uint64_t, std::uint64_t>::with<file_chunk>,
  // a worker's marker for cut N: its pushes before it are in the cut, after
  // it are not (per-sender FIFO)
  caf::reacts_to<cut_atom, std::uint64_t>,
  // the coordinator gave cut N up (aborted: a trainer was lost during it):
  // unaligned, it ends here and the pushes it held are applied
  caf::reacts_to<cut_atom, std::uint64_t, resume_atom>,
  // a worker's end: it pushes nothing more (counts as its marker of any cut)
  caf::reacts_to<end_atom>,
  // the background writer of cut N finished (sent by the writer thread)
  caf::reacts_to<done_atom, std::uint64_t>,
  // CPR: the background writer of the shard's save in flight finished (sent
  // by the writer thread)
  caf::reacts_to<done_atom, save_atom>,
  // the writer thread of save(FOLDER) number N finished (sent by that thread;
  // its handler replies the save)
  caf::reacts_to<done_atom, save_atom, std::uint64_t>,
  // CPR (recovery.mode=partial): the shard's own save timer
  caf::reacts_to<tick_atom>,
  // CPR: a restarted shard reloads its own newest checkpoint; replies the
  // bytes read, the saves applied, the newest save's time and the time it
  // was ready (actor clock, ns since its epoch; the save's INT64_MIN when
  // there was none: the initial rows)
  caf::replies_to<recover_atom>::with<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t>>;

// Owns the EASGD centre variable for [offset, offset + size).
using dense_shard_actor = caf::typed_actor<
  // elastic step on a replica range: d = alpha (w_i - c); c += d; reply d
  caf::replies_to<exchange_atom, dense_range>::with<dense_range>,
  // the same through DCT (model/dct_sync.hpp): the trainer's thresholded
  // change in, the thresholded d out
  caf::replies_to<exchange_atom, sparse_range>::with<sparse_range>,
  // the current centre range
  caf::replies_to<dump_atom>::with<dense_range>>;

// Serves one trainer's part of the input, one mini-batch per request.
using reader_actor = caf::typed_actor<
  // the next batch; an empty batch (size 0) means the end of the data
  caf::replies_to<next_atom>::with<example_batch>,
  // its position (checkpoint cuts)
  caf::replies_to<where_atom>::with<reader_mark>>;

// Pulls batches, looks up rows, trains lock-free on its trainer's replica.
using worker_actor = caf::typed_actor<
  // begin the loop; the worker reports done_atom + worker_stats to its trainer
  caf::reacts_to<start_atom>,
  // cut N: take no new batch, train the ones in hand, send marker N to every
  // shard after the last push, report parked_atom N to the trainer, wait
  caf::reacts_to<cut_atom, std::uint64_t>,
  // the trainer copied the replica: go on
  caf::reacts_to<resume_atom, std::uint64_t>,
  // wall clock: the request watchdog's tick (hogwild_worker.hpp, Failures)
  caf::reacts_to<tick_atom>,
  // embedding shard S was restarted (recovery.mode=partial): its new handle;
  // lookups lost with the old one are sent again
  caf::reacts_to<rebind_atom, std::uint32_t, caf::strong_actor_ptr>>;

// Synchronises its trainer's replica in the background (S-*) or on demand (FR-*).
using syncer_actor = caf::typed_actor<
  // ring position and all syncers in ring order (MA/BMUF); sent once before start
  caf::reacts_to<peers_atom, std::uint32_t, std::vector<caf::strong_actor_ptr>>,
  // re-form the ring (generation > the current one; multi-node, after a trainer
  // was lost): the in-flight round is abandoned, rank and members are the survivors'
  caf::reacts_to<peers_atom, std::uint32_t, std::uint32_t, std::vector<caf::strong_actor_ptr>>,
  // begin (shadow methods: loop rounds back to back until stopped)
  caf::reacts_to<start_atom>,
  // one all-reduce step from the previous syncer in the ring
  caf::reacts_to<ring_atom, ring_chunk>,
  // dct.dp: one member's thresholded change, travelling the ring once
  caf::reacts_to<ring_atom, ring_sparse>,
  // foreground: run one round now; the reply comes when it has completed
  caf::replies_to<sync_atom>::with<std::uint64_t>,
  // its trainer's workers are done (FR: keep serving rounds for the others)
  caf::reacts_to<end_atom>,
  // rounds completed so far
  caf::replies_to<stats_atom>::with<std::uint64_t>,
  // finish every round up to and including `last_round`, then report
  caf::replies_to<stop_atom, std::uint64_t>::with<sync_stats>,
  // timer for the optional pause between rounds
  caf::reacts_to<tick_atom>,
  // from a worker: the replica reached the batch the syncer's pacing waits for
  caf::reacts_to<wake_atom>,
  // checkpoint cut: complete every round up to `last_round` (ring; EASGD: the
  // one in flight), then start none until resume; the reply comes when held
  caf::replies_to<hold_atom, std::uint64_t>::with<sync_hold>,
  // ring methods, before a cut: start no round beyond `last_round` or the one
  // in flight; the reply (at once) is the round this syncer will hold at
  caf::replies_to<aim_atom, std::uint64_t>::with<std::uint64_t>,
  caf::reacts_to<resume_atom>>;

// Owns the replica; spawns and monitors its workers, reader and syncer.
using trainer_actor = caf::typed_actor<
  // start training; the reply comes when every worker has reached the end
  caf::replies_to<start_atom>::with<worker_stats>,
  // a worker reached the end of its data
  caf::reacts_to<done_atom, worker_stats>,
  // live progress for the coordinator's progress line
  caf::replies_to<stats_atom>::with<progress_report>,
  // its syncer, so the coordinator can wire the ring (peers_atom to each syncer)
  caf::replies_to<peers_atom>::with<caf::strong_actor_ptr>,
  // rounds completed by its syncer (for the coordinated stop)
  caf::replies_to<sync_atom>::with<std::uint64_t>,
  // stop the syncer after `last_round`; reply with the final report
  caf::replies_to<stop_atom, std::uint64_t>::with<trainer_report>,
  // checkpoint cut N (cluster/cluster_cut.hpp): hold the syncer after
  // `last_round`, park the workers, copy replica and reader position, let the
  // workers go on; the syncer stays held until resume_atom
  caf::replies_to<cut_atom, std::uint64_t, std::uint64_t>::with<cut_report>,
  // its workers' handles (a cut after another trainer's loss asks the shards
  // to align over the live trainers' workers only)
  caf::replies_to<workers_atom>::with<std::vector<caf::strong_actor_ptr>>,
  // a worker is parked for cut N
  caf::reacts_to<parked_atom, std::uint64_t>,
  // the cut is written: release the syncer
  caf::reacts_to<resume_atom>,
  // embedding shard S was restarted: passed on to every worker
  caf::reacts_to<rebind_atom, std::uint32_t, caf::strong_actor_ptr>>;

// Walks one job's training protocol (cluster/coordinator_actor.hpp); the hooks
// (started, polled, trained, restart) are requests to its caller.
using coordinator_actor = caf::typed_actor<
  caf::reacts_to<begin_atom>,                   // run steps 1-3
  caf::reacts_to<poll_atom, std::uint64_t>,     // timer: generation
  caf::reacts_to<deadline_atom, std::uint64_t>, // timer: generation
  caf::reacts_to<finish_atom>>;

// One per process of a multi-node cluster (deploy/node_agent.hpp): admits
// nodes (challenge, hello, ready, roster) and spawns and ends their roles.
using node_agent_actor = caf::typed_actor<
  caf::replies_to<challenge_atom, std::string, std::string>::with<node_challenge>,
  caf::replies_to<hello_atom, node_hello, caf::strong_actor_ptr>::with<node_roster>,
  caf::replies_to<ready_atom, std::string>::with<bool>,
  caf::replies_to<roster_atom>::with<node_roster>,
  caf::replies_to<spawn_atom, role_plan>::with<spawned_roles>,
  caf::reacts_to<end_atom>>;

} // namespace actors
