#pragma once
// Per-run time series (`train --output.dir=DIR` writes DIR/timeline.csv): a
// row every `interval` seconds from the progress samples the engines already
// produce (progress_reporter::set_timeline hands them over: every batch in
// sequential mode, every poll of the simulated cluster), plus one final row
// with the run's final metrics at the time training ended.
//
// CSV columns (header line first, one row per sample, '.' decimals):
//   time_s            seconds since the timeline was created (~ training start)
//   examples          examples trained so far, all trainers
//   examples_per_s    examples since the previous row / seconds since it
//   train_ne          progressive train NE so far (empty before any example)
//   sync_rounds       completed sync rounds so far, summed over trainers
//   sync_gap          mean batches between rounds so far (empty without rounds)
//   blocked_fraction  worker time blocked on foreground sync so far (empty: none)
//   bytes             embedding lookup + push + dense sync bytes so far
// So the last row's train_ne, sync_rounds, sync_gap, blocked_fraction and
// bytes are the ones in metrics.json.
//
// Rows are written to the stream as they are taken (a long run can be plotted
// while it trains) and kept in rows(). Thread safety: none; one caller thread.
#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/progress.hpp"
#include "report/run_metrics.hpp"

namespace runtime {

struct timeline_row {
  double time_s = 0;
  std::uint64_t examples = 0;
  double examples_per_s = 0;
  std::optional<double> train_ne;
  std::uint64_t sync_rounds = 0;
  std::optional<double> sync_gap;
  std::optional<double> blocked_fraction;
  std::uint64_t bytes = 0;
};

// "time_s,examples,...,bytes" (no newline).
std::string timeline_header();
// One CSV line (no newline); absent values are empty fields.
std::string format_row(const timeline_row& r);

// The final sample of a run: its metrics as a progress sample.
progress_sample final_sample(const run_metrics& m);

class timeline {
public:
  using clock_type = std::chrono::steady_clock;

  // interval_seconds > 0. `out` (not owned, may be null) gets the header now
  // and every row as it is taken, flushed.
  timeline(double interval_seconds, std::ostream* out);

  // Takes a row when at least `interval` seconds passed since the previous
  // one (the first after `interval`). Cheap otherwise: one clock read.
  void offer(const progress_sample& s);
  // The same at `t` seconds since the start (tests, and offer() itself).
  void offer_at(const progress_sample& s, double t);

  // Training ended now (progress_reporter::finish); finish() dates its row so.
  void mark_end();
  void mark_end_at(double t);

  // The final row, at the end mark (or now without one). Once only.
  void finish(const progress_sample& s);

  const std::vector<timeline_row>& rows() const { return rows_; }

private:
  double now() const;
  void add(const progress_sample& s, double t);

  double interval_;
  std::ostream* out_;
  clock_type::time_point start_;
  double next_due_;
  std::optional<double> end_;
  bool finished_ = false;
  std::vector<timeline_row> rows_;
};

} // namespace runtime
