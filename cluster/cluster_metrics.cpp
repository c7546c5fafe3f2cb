#include "cluster/cluster_metrics.hpp"

#include <algorithm>

#include "model/check.hpp"
#include "model/metrics.hpp"

namespace runtime {

std::vector<double> sync_gaps(const messages::sync_stats& s) {
  std::vector<double> out;
  std::uint64_t prev = 0;
  for (auto b : s.batches_at_round) {
    out.push_back(double(b - std::min(b, prev)));
    prev = b;
  }
  return out;
}

namespace {
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5));
  return v[i];
}
} // namespace

std::optional<dct_mp_metrics> dct_mp_from(const std::vector<messages::trainer_report>& reports,
                                          std::size_t dim, const run_metrics& run,
                                          std::size_t key_words) {
  dct_mp_metrics m;
  m.examples = run.examples;
  m.lookup_bytes = run.bytes.lookup;
  m.push_bytes = run.bytes.push;
  std::uint64_t rows = 0, rows_of = 0, grads = 0, grads_of = 0;
  for (const auto& r : reports) {
    const auto& w = r.work;
    m.lookup_dense_bytes += 4 * w.mp_rows_of;
    // A push's keys (8 bytes a row, 16 for a dynamic table's) travel either way.
    m.push_dense_bytes += 4 * w.mp_grads_of + (dim ? 8 * key_words * (w.mp_grads_of / dim) : 0);
    rows += w.mp_rows_sent;
    rows_of += w.mp_rows_of;
    grads += w.mp_grads_sent;
    grads_of += w.mp_grads_of;
    m.refreshes += w.mp_refreshes;
  }
  if (rows_of == 0)
    return std::nullopt;
  m.row_fraction = double(rows) / double(rows_of);
  m.grad_fraction = grads_of ? double(grads) / double(grads_of) : 0;
  return m;
}

void aggregate_reports(const std::vector<messages::trainer_report>& reports, double seconds,
                       run_metrics& out) {
  model::ne_accumulator ne;
  double busy = 0, blocked = 0, lookup_wait = 0;
  std::vector<double> gaps;
  out.examples = 0;
  out.malformed_lines = 0;
  out.cut_bags = 0;
  out.sync.rounds = 0;
  out.sync.bytes = 0;
  out.bytes = {};
  out.trainer_examples_per_second.clear();
  out.workers.emplace();
  for (const auto& r : reports) {
    const auto& w = r.work;
    out.examples += w.examples;
    ne.add_batch(w.loss_sum, w.prob_sum, w.examples, w.positives);
    busy += w.busy_seconds;
    blocked += w.blocked_seconds;
    lookup_wait += w.lookup_wait_seconds;
    out.bytes.lookup += w.lookup_bytes;
    out.bytes.push += w.push_bytes;
    out.malformed_lines += w.malformed_lines;
    out.cut_bags += w.cut_bags;
    out.workers->cpu_seconds += w.cpu_seconds;
    out.workers->dense_step_cpu_seconds += w.dense_step_cpu_seconds;
    out.workers->thread_moves += w.thread_moves;
    out.workers->batches += w.batches;
    out.sync.rounds += r.sync.rounds;
    out.sync.bytes += r.sync.bytes_sent;
    // Per trainer: its examples over the job's training wall time.
    out.trainer_examples_per_second.push_back(seconds > 0 ? double(w.examples) / seconds : 0);
    auto g = sync_gaps(r.sync);
    gaps.insert(gaps.end(), g.begin(), g.end());
  }
  out.bytes.dense_sync = out.sync.bytes;
  out.sync.bytes_received = 0;
  out.dct.reset();
  dct_metrics dct;
  std::uint64_t sent = 0, sent_of = 0, replied = 0, replied_of = 0;
  for (const auto& r : reports) {
    out.sync.bytes_received += r.sync.bytes_received;
    if (r.sync.dct_sent_of == 0)
      continue;
    dct.rounds += r.sync.rounds;
    dct.bytes += r.sync.bytes_sent + r.sync.bytes_received;
    dct.dense_bytes += r.sync.dct_dense_bytes;
    sent += r.sync.dct_sent;
    sent_of += r.sync.dct_sent_of;
    replied += r.sync.dct_replied;
    replied_of += r.sync.dct_replied_of;
    dct.refreshes += r.sync.dct_refreshes;
  }
  if (sent_of > 0) {
    dct.sent_fraction = double(sent) / double(sent_of);
    dct.reply_fraction = replied_of ? double(replied) / double(replied_of) : 0;
    out.dct = dct;
  }
  out.seconds = seconds;
  out.train_ne = ne.ne();
  out.sync.worker_blocked_fraction = busy > 0 ? blocked / busy : 0;
  out.lookup_wait_fraction = busy > 0 ? lookup_wait / busy : 0;
  if (!gaps.empty()) {
    double sum = 0;
    for (double g : gaps)
      sum += g;
    out.sync.sync_gap_mean = sum / double(gaps.size());
    out.sync.sync_gap_p50 = percentile(gaps, 0.5);
    out.sync.sync_gap_p90 = percentile(gaps, 0.9);
    out.sync.sync_gap_max = *std::max_element(gaps.begin(), gaps.end());
  }
}

double host_examples_per_second(const std::vector<messages::trainer_report>& reports,
                                std::size_t workers_per_trainer, double dilation) {
  double total = 0;
  const double w = double(std::max<std::size_t>(1, workers_per_trainer));
  for (const auto& r : reports) {
    const auto& s = r.work;
    const double t = (s.cpu_seconds + (s.lookup_wait_seconds + s.blocked_seconds) / dilation) / w;
    if (t > 0)
      total += double(s.examples) / t;
  }
  return total;
}

std::vector<float> average_replicas(const std::vector<messages::trainer_report>& reports) {
  std::vector<float> avg;
  if (reports.empty())
    return avg;
  avg.assign(reports[0].replica.size(), 0.0f);
  for (const auto& r : reports) {
    SS_CHECK(r.replica.size() == avg.size(), "average_replicas: replicas of one model");
    for (std::size_t i = 0; i < avg.size(); ++i)
      avg[i] += r.replica.values[i];
  }
  const float inv = 1.0f / float(reports.size());
  for (auto& x : avg)
    x *= inv;
  return avg;
}

void add_progress(messages::progress_report& total, const messages::progress_report& p) {
  total.examples += p.examples;
  total.loss_sum += p.loss_sum;
  total.prob_sum += p.prob_sum;
  total.positives += p.positives;
  total.sync_rounds += p.sync_rounds;
  total.batches += p.batches;
  total.worker_seconds += p.worker_seconds;
  total.blocked_seconds += p.blocked_seconds;
  total.lookup_bytes += p.lookup_bytes;
  total.push_bytes += p.push_bytes;
  total.sync_bytes += p.sync_bytes;
  total.read_bytes += p.read_bytes;
  total.dct_sync_bytes += p.dct_sync_bytes;
  total.dct_embedding_bytes += p.dct_embedding_bytes;
  auto add = [](std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& x) {
    if (into.size() < x.size())
      into.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      into[i] += x[i];
  };
  add(total.shard_lookup_bytes, p.shard_lookup_bytes);
  add(total.shard_push_bytes, p.shard_push_bytes);
  total.trainers.insert(total.trainers.end(), p.trainers.begin(), p.trainers.end());
}

progress_sample progress_of(const messages::progress_report& total) {
  progress_sample s;
  s.examples = total.examples;
  model::ne_accumulator ne;
  ne.add_batch(total.loss_sum, total.prob_sum, total.examples, total.positives);
  if (total.examples > 0)
    s.train_ne = ne.ne();
  if (total.sync_rounds > 0)
    s.sync_gap = double(total.batches) / double(total.sync_rounds);
  s.sync_rounds = total.sync_rounds;
  if (total.worker_seconds > 0)
    s.blocked_fraction = std::min(1.0, total.blocked_seconds / total.worker_seconds);
  s.bytes = total.lookup_bytes + total.push_bytes + total.sync_bytes;
  s.sync_bytes = total.sync_bytes;
  s.lookup_bytes = total.lookup_bytes;
  s.push_bytes = total.push_bytes;
  s.dct_sync_bytes = total.dct_sync_bytes;
  s.dct_embedding_bytes = total.dct_embedding_bytes;
  s.shard_lookup_bytes = total.shard_lookup_bytes;
  s.shard_push_bytes = total.shard_push_bytes;
  for (const auto& t : total.trainers)
    s.trainers.push_back({t.trainer, t.examples, t.sync_rounds});
  std::sort(s.trainers.begin(), s.trainers.end(),
            [](const auto& a, const auto& b) { return a.trainer < b.trainer; });
  return s;
}

} // namespace runtime
