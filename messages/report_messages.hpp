#pragma once
// What the roles report: a worker's and a syncer's counters, a trainer's
// final report (with its replica), and the live progress the coordinator
// polls. Doubles travel as their bits (blobs.hpp's bits()).
#include <cstdint>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/blobs.hpp"

namespace messages {

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
  std::uint64_t cut_bags = 0;        // bags it cut to data.max-ids (likewise)
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
           a.cut_bags == b.cut_bags &&
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
           bits(x.lookup_wait_seconds), x.lookup_bytes, x.push_bytes, x.malformed_lines, x.cut_bags,
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
