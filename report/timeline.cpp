#include "report/timeline.hpp"

#include <algorithm>
#include <cstdio>

namespace runtime {

namespace {

std::string number(double x, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

std::string optional_number(const std::optional<double>& x, const char* fmt) {
  return x ? number(*x, fmt) : std::string();
}

} // namespace

std::string timeline_header(std::size_t hosts) {
  std::string h =
    "time_s,examples,examples_per_s,train_ne,sync_rounds,sync_gap,blocked_fraction,bytes";
  for (std::size_t i = 0; i < hosts; ++i)
    h += ",host_busy_" + std::to_string(i);
  return h;
}

std::string format_row(const timeline_row& r, std::size_t hosts) {
  std::string line =
    number(r.time_s, "%.3f") + "," + std::to_string(r.examples) + "," +
    number(r.examples_per_s, "%.1f") + "," + optional_number(r.train_ne, "%.6f") + "," +
    std::to_string(r.sync_rounds) + "," + optional_number(r.sync_gap, "%.4f") + "," +
    optional_number(r.blocked_fraction, "%.6f") + "," + std::to_string(r.bytes);
  for (std::size_t i = 0; i < hosts; ++i)
    line += "," + (i < r.host_busy.size() ? optional_number(r.host_busy[i], "%.6f") : "");
  return line;
}

progress_sample final_sample(const run_metrics& m) {
  progress_sample s;
  s.examples = m.examples;
  s.fraction_done = 1;
  if (m.examples > 0)
    s.train_ne = m.train_ne;
  s.sync_gap = m.sync.sync_gap_mean;
  s.sync_rounds = m.sync.rounds;
  if (m.mode != "sequential")
    s.blocked_fraction = m.sync.worker_blocked_fraction;
  s.bytes = m.bytes.lookup + m.bytes.push + m.bytes.dense_sync;
  s.sync_bytes = m.bytes.dense_sync;
  s.lookup_bytes = m.bytes.lookup;
  s.push_bytes = m.bytes.push;
  return s;
}

timeline::timeline(double interval_seconds, std::ostream* out, std::size_t hosts)
  : interval_(interval_seconds), out_(out), hosts_(hosts), start_(clock_type::now()),
    next_due_(interval_seconds) {
  if (out_)
    *out_ << timeline_header(hosts_) << '\n' << std::flush;
}

double timeline::now() const {
  return std::chrono::duration<double>(clock_type::now() - start_).count();
}

void timeline::offer(const progress_sample& s) {
  offer_at(s, s.virtual_seconds ? *s.virtual_seconds : now());
}

void timeline::offer_at(const progress_sample& s, double t) {
  if (finished_ || t < next_due_)
    return;
  add(s, t);
  // The next row is due one interval after this one; a late sample (a slow
  // poll) does not make the following rows bunch up.
  next_due_ = t + interval_;
}

void timeline::mark_end() { mark_end_at(now()); }

void timeline::mark_end_at(double t) { end_ = t; }

void timeline::mark_end_at(double t, const progress_sample& s) {
  end_ = t;
  end_busy_ = s.host_busy_seconds;
}

void timeline::finish(const progress_sample& s) {
  if (finished_)
    return;
  double t = end_ ? *end_ : now();
  if (!rows_.empty() && t < rows_.back().time_s)
    t = rows_.back().time_s;
  if (s.host_busy_seconds.empty() && !end_busy_.empty()) {
    progress_sample with_hosts = s;
    with_hosts.host_busy_seconds = end_busy_;
    with_hosts.cores_per_host = cores_;
    add(with_hosts, t);
  } else {
    add(s, t);
  }
  finished_ = true;
}

void timeline::add(const progress_sample& s, double t) {
  timeline_row r;
  r.time_s = t;
  r.examples = s.examples;
  const double t0 = rows_.empty() ? 0.0 : rows_.back().time_s;
  const std::uint64_t e0 = rows_.empty() ? 0 : rows_.back().examples;
  if (t > t0 && s.examples >= e0)
    r.examples_per_s = double(s.examples - e0) / (t - t0);
  r.train_ne = s.train_ne;
  r.sync_rounds = s.sync_rounds;
  r.sync_gap = s.sync_gap;
  r.blocked_fraction = s.blocked_fraction;
  r.bytes = s.bytes;
  // Per host: core seconds since the previous row over its span x cores.
  if (s.cores_per_host > 0)
    cores_ = s.cores_per_host;
  if (!s.host_busy_seconds.empty() && cores_ > 0) {
    r.host_busy.resize(s.host_busy_seconds.size());
    for (std::size_t h = 0; h < s.host_busy_seconds.size(); ++h) {
      const double b0 = h < busy_.size() ? busy_[h] : 0.0;
      if (t > t0)
        r.host_busy[h] = std::max(0.0, s.host_busy_seconds[h] - b0) / ((t - t0) * double(cores_));
    }
    busy_ = s.host_busy_seconds;
  }
  rows_.push_back(r);
  if (out_)
    *out_ << format_row(r, hosts_) << '\n' << std::flush;
}

} // namespace runtime
