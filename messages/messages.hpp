#pragma once
// Every message struct of the cluster protocol, each with its inspect() right
// below it, plus the atoms. Float and key payloads are raw blobs (blobs.hpp).
// Register everything on every node with register_messages(cfg)
// (registry.hpp); a type missing there arrives empty on a remote path.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

#include "messages/blobs.hpp"

namespace messages {

// -- atoms (verbs; at most 10 characters, part of the wire format) -----------
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
using apply_atom = caf::atom_constant<caf::atom("apply")>;       // a deferred write is due
using stats_atom = caf::atom_constant<caf::atom("stats")>;       // report counters
using dump_atom = caf::atom_constant<caf::atom("dump")>;         // full state (eval)
using save_atom = caf::atom_constant<caf::atom("save")>;         // write a checkpoint file
using peers_atom = caf::atom_constant<caf::atom("peers")>;       // ring neighbours
using end_atom = caf::atom_constant<caf::atom("end")>;           // no more data
using rebind_atom = caf::atom_constant<caf::atom("rebind")>;     // a role restarted elsewhere
using recover_atom = caf::atom_constant<caf::atom("recover")>;   // reload own checkpoint (CPR)
using sparse_atom = caf::atom_constant<caf::atom("sparse")>;     // DCT: thresholded rows wanted
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

// -- embedding shards ----------------------------------------------------------

// Lookup: de-duplicated row keys (model::row_key) of one shard for one batch.
// Reply: embedding_rows with dim floats per key, in the order of the keys.
struct lookup_request {
  std::uint64_t batch = 0; // requester's batch sequence number, echoed back
  key_blob keys;
  friend bool operator==(const lookup_request& a, const lookup_request& b) {
    return a.batch == b.batch && a.keys == b.keys;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lookup_request& x) {
  return f(caf::meta::type_name("lookup_request"), x.batch, x.keys);
}

struct embedding_rows {
  std::uint64_t batch = 0;
  float_blob rows; // [keys * dim]
  friend bool operator==(const embedding_rows& a, const embedding_rows& b) {
    return a.batch == b.batch && a.rows == b.rows;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embedding_rows& x) {
  return f(caf::meta::type_name("embedding_rows"), x.batch, x.rows);
}

// Push: the summed gradient of each key (dim floats per key), applied by the
// shard's sparse optimiser. Fire and forget (Hogwild across trainers).
struct embedding_grads {
  key_blob keys;
  float_blob grads; // [keys * dim]
  friend bool operator==(const embedding_grads& a, const embedding_grads& b) {
    return a.keys == b.keys && a.grads == b.grads;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embedding_grads& x) {
  return f(caf::meta::type_name("embedding_grads"), x.keys, x.grads);
}

// DCT (dct.mp, model/dct_mp.hpp): a lookup's reply and a push with their
// floats thresholded, in model/dct_codec's wire form over [keys * dim]
// (indices or bitmap + values). `refreshes`: the threshold estimates this
// reply made at the shard (for the metrics).
struct sparse_rows {
  std::uint64_t batch = 0;
  std::uint32_t refreshes = 0;
  byte_blob payload;
  friend bool operator==(const sparse_rows& a, const sparse_rows& b) {
    return a.batch == b.batch && a.refreshes == b.refreshes && a.payload == b.payload;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sparse_rows& x) {
  return f(caf::meta::type_name("sparse_rows"), x.batch, x.refreshes, x.payload);
}

struct sparse_grads {
  key_blob keys;
  byte_blob payload; // [keys * dim] gradient entries, the unsent ones 0
  friend bool operator==(const sparse_grads& a, const sparse_grads& b) {
    return a.keys == b.keys && a.payload == b.payload;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sparse_grads& x) {
  return f(caf::meta::type_name("sparse_grads"), x.keys, x.payload);
}

// -- dense synchronisation -------------------------------------------------------

// A contiguous range [offset, offset + values.size()) of the flat dense buffer:
// S-EASGD sends its replica's range to the dense shard owning it; the reply
// (also a dense_range) carries the elastic difference d = alpha (w_i - centre).
struct dense_range {
  std::uint64_t offset = 0;
  float_blob values;
  friend bool operator==(const dense_range& a, const dense_range& b) {
    return a.offset == b.offset && a.values == b.values;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dense_range& x) {
  return f(caf::meta::type_name("dense_range"), x.offset, x.values);
}

// DCT (dct.dp, model/dct_sync.hpp): the thresholded change of a trainer's
// range, and the shard's thresholded d in reply, in model/dct_codec's wire
// form (indices or bitmap + values). `trainer` picks the shard's mirror.
struct sparse_range {
  std::uint64_t offset = 0;
  std::uint32_t trainer = 0;
  byte_blob payload;
  friend bool operator==(const sparse_range& a, const sparse_range& b) {
    return a.offset == b.offset && a.trainer == b.trainer && a.payload == b.payload;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sparse_range& x) {
  return f(caf::meta::type_name("sparse_range"), x.offset, x.trainer, x.payload);
}

// One step of a chunked ring all-reduce among the shadow syncers. Steps
// 0..N-2 are reduce-scatter (add), N-1..2N-3 all-gather (copy).
struct ring_chunk {
  std::uint32_t generation = 0; // ring membership; a re-formed ring counts up
  std::uint64_t round = 0;
  std::uint32_t step = 0;
  std::uint32_t chunk = 0;
  float_blob values;
  friend bool operator==(const ring_chunk& a, const ring_chunk& b) {
    return a.generation == b.generation && a.round == b.round && a.step == b.step && a.chunk == b.chunk && a.values == b.values;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ring_chunk& x) {
  return f(caf::meta::type_name("ring_chunk"), x.generation, x.round, x.step, x.chunk, x.values);
}

// DCT for MA/BMUF (dct.dp; actors/sparse_allgather.hpp): one member's
// thresholded change, travelling the ring once, in model/dct_codec's form.
struct ring_sparse {
  std::uint32_t generation = 0; // ring membership, as ring_chunk's
  std::uint64_t round = 0;
  std::uint32_t origin = 0;     // the rank whose change it is
  byte_blob payload;
  friend bool operator==(const ring_sparse& a, const ring_sparse& b) {
    return a.generation == b.generation && a.round == b.round && a.origin == b.origin &&
           a.payload == b.payload;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ring_sparse& x) {
  return f(caf::meta::type_name("ring_sparse"), x.generation, x.round, x.origin, x.payload);
}

// -- data ----------------------------------------------------------------------

// One mini-batch as data::batch holds it, in wire form.
struct example_batch {
  std::uint64_t seq = 0; // per reader, from 0
  std::uint32_t num_dense = 0;
  std::uint32_t num_cat = 0;
  float_blob labels; // [size]
  float_blob dense;  // [size * num_dense]
  key_blob cat;      // [size * num_cat] hashes, or every id of the bags
  // Multi-hot (data.multi-hot): [size * num_cat + 1], field (e, c) being
  // cat[offsets[e*num_cat + c] .. offsets[e*num_cat + c + 1]) as in
  // data::batch::cat_offsets; empty for single-hot batches.
  raw_blob<std::uint32_t> cat_offsets;
  std::uint64_t malformed = 0; // end-of-data batch: malformed lines the reader skipped
  std::size_t size() const { return labels.size(); }
  friend bool operator==(const example_batch& a, const example_batch& b) {
    return a.seq == b.seq && a.num_dense == b.num_dense && a.num_cat == b.num_cat &&
           a.labels == b.labels && a.dense == b.dense && a.cat == b.cat &&
           a.cat_offsets == b.cat_offsets && a.malformed == b.malformed;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, example_batch& x) {
  return f(caf::meta::type_name("example_batch"), x.seq, x.num_dense, x.num_cat, x.labels, x.dense,
           x.cat, x.cat_offsets, x.malformed);
}

// -- reports ---------------------------------------------------------------------

// What a worker (or a whole trainer, summed) reports at the end.
struct worker_stats {
  std::uint64_t examples = 0;
  std::uint64_t batches = 0;
  double loss_sum = 0;        // progressive BCE, before each update
  double prob_sum = 0;
  std::uint64_t positives = 0;
  double busy_seconds = 0;    // wall time from start to the end of data
  double blocked_seconds = 0; // waiting for foreground sync rounds
  double lookup_wait_seconds = 0; // waiting for embedding rows not yet there
  std::uint64_t lookup_bytes = 0; // rows received
  std::uint64_t push_bytes = 0;   // gradients sent
  std::uint64_t malformed_lines = 0; // skipped by this worker's reader (shared per trainer)
  double cpu_seconds = 0;     // thread CPU time spent preparing and computing batches
  double dense_step_cpu_seconds = 0; // ... of it in the dense optimiser's step on the replica
  std::uint64_t thread_moves = 0;    // batches trained on another thread than the last one
  // DCT (dct.mp): row entries received of the entries looked up, gradient
  // entries pushed of the entries they stand for, and the shards' threshold
  // estimates for this worker's lookups.
  std::uint64_t mp_rows_sent = 0, mp_rows_of = 0, mp_grads_sent = 0, mp_grads_of = 0;
  std::uint64_t mp_refreshes = 0;
  friend bool operator==(const worker_stats& a, const worker_stats& b) {
    return a.examples == b.examples && a.batches == b.batches && a.loss_sum == b.loss_sum &&
           a.prob_sum == b.prob_sum && a.positives == b.positives &&
           a.busy_seconds == b.busy_seconds && a.blocked_seconds == b.blocked_seconds &&
           a.lookup_wait_seconds == b.lookup_wait_seconds && a.lookup_bytes == b.lookup_bytes &&
           a.push_bytes == b.push_bytes && a.malformed_lines == b.malformed_lines &&
           a.cpu_seconds == b.cpu_seconds &&
           a.dense_step_cpu_seconds == b.dense_step_cpu_seconds &&
           a.thread_moves == b.thread_moves && a.mp_rows_sent == b.mp_rows_sent &&
           a.mp_rows_of == b.mp_rows_of && a.mp_grads_sent == b.mp_grads_sent &&
           a.mp_grads_of == b.mp_grads_of && a.mp_refreshes == b.mp_refreshes;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_stats& x) {
  return f(caf::meta::type_name("worker_stats"), x.examples, x.batches, bits(x.loss_sum),
           bits(x.prob_sum), x.positives, bits(x.busy_seconds), bits(x.blocked_seconds),
           bits(x.lookup_wait_seconds), x.lookup_bytes, x.push_bytes, x.malformed_lines,
           bits(x.cpu_seconds), bits(x.dense_step_cpu_seconds), x.thread_moves, x.mp_rows_sent,
           x.mp_rows_of, x.mp_grads_sent, x.mp_grads_of, x.mp_refreshes);
}

// What a shadow syncer reports.
struct sync_stats {
  std::uint64_t rounds = 0;
  std::uint64_t bytes_sent = 0;
  double seconds = 0;          // wall time spent inside rounds
  // Batches its trainer had completed at the end of each round (for the sync
  // gap distribution: differences of consecutive entries).
  std::vector<std::uint64_t> batches_at_round;
  // BMUF at the stop: the block state w_g and Delta (checkpoints); empty for
  // the other methods.
  float_blob bmuf_global, bmuf_momentum;
  // Payload bytes of the replies it received (EASGD: d, dense or DCT).
  std::uint64_t bytes_received = 0;
  // DCT (dct.dp): entries sent of the entries they were chosen from, each
  // way, and the syncer's threshold estimates.
  std::uint64_t dct_sent = 0, dct_sent_of = 0, dct_replied = 0, dct_replied_of = 0;
  std::uint64_t dct_refreshes = 0;
  // DCT: the bytes the dense method would have sent (EASGD: both ways) in
  // the same rounds.
  std::uint64_t dct_dense_bytes = 0;
  friend bool operator==(const sync_stats& a, const sync_stats& b) {
    return a.rounds == b.rounds && a.bytes_sent == b.bytes_sent && a.seconds == b.seconds &&
           a.batches_at_round == b.batches_at_round && a.bmuf_global == b.bmuf_global &&
           a.bmuf_momentum == b.bmuf_momentum && a.bytes_received == b.bytes_received &&
           a.dct_sent == b.dct_sent && a.dct_sent_of == b.dct_sent_of &&
           a.dct_replied == b.dct_replied && a.dct_replied_of == b.dct_replied_of &&
           a.dct_refreshes == b.dct_refreshes && a.dct_dense_bytes == b.dct_dense_bytes;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sync_stats& x) {
  return f(caf::meta::type_name("sync_stats"), x.rounds, x.bytes_sent, bits(x.seconds),
           x.batches_at_round, x.bmuf_global, x.bmuf_momentum, x.bytes_received, x.dct_sent,
           x.dct_sent_of, x.dct_replied, x.dct_replied_of, x.dct_refreshes, x.dct_dense_bytes);
}

// A trainer's final report: its workers' stats summed, its syncer's stats,
// and its dense replica (for evaluation: one replica or the average).
struct trainer_report {
  std::uint32_t trainer = 0;
  worker_stats work;
  sync_stats sync;
  float_blob replica;
  float_blob state; // the dense optimiser's state (checkpoints)
  friend bool operator==(const trainer_report& a, const trainer_report& b) {
    return a.trainer == b.trainer && a.work == b.work && a.sync == b.sync &&
           a.replica == b.replica && a.state == b.state;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trainer_report& x) {
  return f(caf::meta::type_name("trainer_report"), x.trainer, x.work, x.sync, x.replica,
           x.state);
}

// One trainer's own counters inside a progress_report: the sum of several
// reports keeps one entry per trainer (the /metrics page's trainer label).
struct trainer_progress {
  std::uint32_t trainer = 0;
  std::uint64_t examples = 0;
  std::uint64_t sync_rounds = 0;
  friend bool operator==(const trainer_progress& a, const trainer_progress& b) {
    return a.trainer == b.trainer && a.examples == b.examples && a.sync_rounds == b.sync_rounds;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trainer_progress& x) {
  return f(caf::meta::type_name("trainer_progress"), x.trainer, x.examples, x.sync_rounds);
}

// Live progress of one trainer, polled by the coordinator for the progress
// line, the timeline and /metrics. Counters since the start; the
// coordinator sums the trainers' (cluster_metrics.hpp's add_progress).
struct progress_report {
  std::uint64_t examples = 0;
  std::uint64_t batches = 0;
  double loss_sum = 0, prob_sum = 0;
  std::uint64_t positives = 0;
  std::uint64_t sync_rounds = 0;
  double worker_seconds = 0;       // wall time of the workers since start, summed
  double blocked_seconds = 0;      // of it: waiting for foreground sync rounds
  std::uint64_t lookup_bytes = 0;  // embedding rows received by the workers
  std::uint64_t push_bytes = 0;    // embedding gradients pushed (keys and values)
  std::uint64_t sync_bytes = 0;    // dense sync payload sent by the syncer
  std::uint64_t read_bytes = 0;    // training data read, all passes (the share done)
  // Of the above, what went DCT-thresholded: the dense sync's (dct.dp) and
  // the lookups' and pushes' (dct.mp).
  std::uint64_t dct_sync_bytes = 0, dct_embedding_bytes = 0;
  // lookup_bytes and push_bytes by embedding shard (index = shard).
  std::vector<std::uint64_t> shard_lookup_bytes, shard_push_bytes;
  // One entry per trainer summed in (a trainer's own report: its one entry).
  std::vector<trainer_progress> trainers;
  friend bool operator==(const progress_report& a, const progress_report& b) {
    return a.examples == b.examples && a.batches == b.batches && a.loss_sum == b.loss_sum &&
           a.prob_sum == b.prob_sum && a.positives == b.positives && a.sync_rounds == b.sync_rounds &&
           a.worker_seconds == b.worker_seconds && a.blocked_seconds == b.blocked_seconds &&
           a.lookup_bytes == b.lookup_bytes && a.push_bytes == b.push_bytes &&
           a.sync_bytes == b.sync_bytes && a.read_bytes == b.read_bytes &&
           a.dct_sync_bytes == b.dct_sync_bytes &&
           a.dct_embedding_bytes == b.dct_embedding_bytes &&
           a.shard_lookup_bytes == b.shard_lookup_bytes &&
           a.shard_push_bytes == b.shard_push_bytes && a.trainers == b.trainers;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress_report& x) {
  return f(caf::meta::type_name("progress_report"), x.examples, x.batches, bits(x.loss_sum),
           bits(x.prob_sum), x.positives, x.sync_rounds, bits(x.worker_seconds),
           bits(x.blocked_seconds), x.lookup_bytes, x.push_bytes, x.sync_bytes, x.read_bytes, x.dct_sync_bytes,
           x.dct_embedding_bytes, x.shard_lookup_bytes, x.shard_push_bytes, x.trainers);
}

} // namespace messages
