#include "report/timeline.hpp"

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

std::string timeline_header() {
  return "time_s,examples,examples_per_s,train_ne,sync_rounds,sync_gap,blocked_fraction,bytes";
}

std::string format_row(const timeline_row& r) {
  return number(r.time_s, "%.3f") + "," + std::to_string(r.examples) + "," +
         number(r.examples_per_s, "%.1f") + "," + optional_number(r.train_ne, "%.6f") + "," +
         std::to_string(r.sync_rounds) + "," + optional_number(r.sync_gap, "%.4f") + "," +
         optional_number(r.blocked_fraction, "%.6f") + "," + std::to_string(r.bytes);
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
  return s;
}

timeline::timeline(double interval_seconds, std::ostream* out)
  : interval_(interval_seconds), out_(out), start_(clock_type::now()), next_due_(interval_seconds) {
  if (out_)
    *out_ << timeline_header() << '\n' << std::flush;
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

void timeline::finish(const progress_sample& s) {
  if (finished_)
    return;
  double t = end_ ? *end_ : now();
  if (!rows_.empty() && t < rows_.back().time_s)
    t = rows_.back().time_s;
  add(s, t);
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
  rows_.push_back(r);
  if (out_)
    *out_ << format_row(r) << '\n' << std::flush;
}

} // namespace runtime
