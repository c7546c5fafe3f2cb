// The trainer's state as the behaviour reads it (see trainer.hpp): which
// monitored peer a DOWN came from, the peers' names in logs and errors, the
// live progress report, and the sum of the workers' final stats.
#include "actors/trainer.hpp"

#include <algorithm>
#include <chrono>

namespace actors {

void accumulate(messages::worker_stats& into, const messages::worker_stats& x) {
  into.examples += x.examples;
  into.batches += x.batches;
  into.loss_sum += x.loss_sum;
  into.prob_sum += x.prob_sum;
  into.positives += x.positives;
  into.busy_seconds += x.busy_seconds;
  into.blocked_seconds += x.blocked_seconds;
  into.lookup_wait_seconds += x.lookup_wait_seconds;
  into.lookup_bytes += x.lookup_bytes;
  into.push_bytes += x.push_bytes;
  into.cpu_seconds += x.cpu_seconds;
  into.dense_step_cpu_seconds += x.dense_step_cpu_seconds;
  into.thread_moves += x.thread_moves;
  into.mp_rows_sent += x.mp_rows_sent;
  into.mp_rows_of += x.mp_rows_of;
  into.mp_grads_sent += x.mp_grads_sent;
  into.mp_grads_of += x.mp_grads_of;
  into.mp_refreshes += x.mp_refreshes;
  // All workers of a trainer share its reader: each reports the same count.
  into.malformed_lines = std::max(into.malformed_lines, x.malformed_lines);
  into.cut_bags = std::max(into.cut_bags, x.cut_bags);
}

trainer_peer trainer_state::identify(const caf::actor_addr& who) const {
  for (std::size_t w = 0; w < workers.size(); ++w)
    if (who == workers[w].address())
      return {peer_role::worker, w};
  if (who == reader.address())
    return {peer_role::reader, 0};
  if (who == syncer.address())
    return {peer_role::syncer, 0};
  for (std::size_t s = 0; s < cfg.shards.size(); ++s)
    if (who == cfg.shards[s].address())
      return {peer_role::embedding_shard, s};
  return {};
}

std::string trainer_state::name_of(const trainer_peer& p) const {
  switch (p.role) {
    case peer_role::worker:
      return "worker-" + std::to_string(cfg.trainer) + "-" + std::to_string(p.index);
    case peer_role::reader: return "reader";
    case peer_role::syncer: return "syncer";
    case peer_role::embedding_shard: return "embedding-shard-" + std::to_string(p.index);
    default: return {};
  }
}

messages::progress_report progress_of(const trainer_state& st,
                                      role_time now) {
  messages::progress_report p;
  p.examples = st.replica->examples.load(std::memory_order_relaxed);
  p.batches = st.replica->batches.load(std::memory_order_relaxed);
  p.loss_sum = st.progress->loss_sum.load(std::memory_order_relaxed);
  p.prob_sum = st.progress->prob_sum.load(std::memory_order_relaxed);
  p.positives = st.progress->positives.load(std::memory_order_relaxed);
  p.sync_rounds = st.rounds;
  if (st.started)
    p.worker_seconds = double(st.workers.size()) *
                       std::chrono::duration<double>(now - st.started_at).count();
  p.blocked_seconds = 1e-9 * double(st.progress->blocked_ns.load(std::memory_order_relaxed));
  p.sync_bytes = st.progress->sync_bytes.load(std::memory_order_relaxed);
  p.read_bytes = st.progress->read_bytes.load(std::memory_order_relaxed);
  for (const auto& b : st.progress->shard_lookup_bytes) {
    p.shard_lookup_bytes.push_back(b.load(std::memory_order_relaxed));
    p.lookup_bytes += p.shard_lookup_bytes.back();
  }
  for (const auto& b : st.progress->shard_push_bytes) {
    p.shard_push_bytes.push_back(b.load(std::memory_order_relaxed));
    p.push_bytes += p.shard_push_bytes.back();
  }
  // dct.dp thresholds every dense sync payload, dct.mp every lookup and push.
  if (st.cfg.syncer.dct.dp)
    p.dct_sync_bytes = p.sync_bytes;
  if (st.cfg.syncer.dct.mp)
    p.dct_embedding_bytes = p.lookup_bytes + p.push_bytes;
  p.trainers.push_back({st.cfg.trainer, p.examples, p.sync_rounds});
  return p;
}

} // namespace actors
