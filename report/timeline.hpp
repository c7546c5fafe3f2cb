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
//   host_busy_H       virtual clock only, one column per simulated host H
//                     (0, 1, ...; hosts as in metrics.json's
//                     sim.core_utilisation): the share of H's cores busy
//                     since the previous row (core seconds charged / virtual
//                     seconds x cores); empty where unknown
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
  std::vector<std::optional<double>> host_busy; // per host, see host_busy_H above
};

// "time_s,examples,...,bytes[,host_busy_0,...]" (no newline), with `hosts`
// host columns.
std::string timeline_header(std::size_t hosts = 0);
// One CSV line (no newline) of `hosts` host columns; absent values are
// empty fields.
std::string format_row(const timeline_row& r, std::size_t hosts = 0);

// The final sample of a run: its metrics as a progress sample.
progress_sample final_sample(const run_metrics& m);

class timeline {
public:
  using clock_type = std::chrono::steady_clock;

  // interval_seconds > 0. `out` (not owned, may be null) gets the header now
  // and every row as it is taken, flushed. `hosts`: the simulated hosts of
  // a virtual-clock run (host_busy_H columns), else 0.
  timeline(double interval_seconds, std::ostream* out, std::size_t hosts = 0);

  // Takes a row when at least `interval` seconds passed since the previous
  // one (the first after `interval`). Cheap otherwise: one clock read.
  void offer(const progress_sample& s);
  // The same at `t` seconds since the start (tests, and offer() itself).
  void offer_at(const progress_sample& s, double t);

  // Training ended now (progress_reporter::finish); finish() dates its row so.
  void mark_end();
  void mark_end_at(double t);
  // The same with the sample of the end (its host busy seconds: those of
  // finish()'s row when its own sample has none).
  void mark_end_at(double t, const progress_sample& s);

  // The final row, at the end mark (or now without one). Once only.
  void finish(const progress_sample& s);

  const std::vector<timeline_row>& rows() const { return rows_; }

private:
  double now() const;
  void add(const progress_sample& s, double t);

  double interval_;
  std::ostream* out_;
  std::size_t hosts_;
  std::vector<double> busy_;     // host busy seconds at the previous row
  std::vector<double> end_busy_; // ... at the end mark
  std::size_t cores_ = 0;        // cores per host, from the samples
  clock_type::time_point start_;
  double next_due_;
  std::optional<double> end_;
  bool finished_ = false;
  std::vector<timeline_row> rows_;
};

} // namespace runtime
