#pragma once
// Progress output for long runs. On a terminal: one live line on stderr,
// redrawn in place at most ~4 times a second. Otherwise: a plain log line
// every `interval` seconds. Both show examples, examples/s, train NE, the
// sync gap (when there is one) and an ETA (when the total is known). Under
// the virtual clock the rate is per virtual second, and the line adds the
// virtual time and how much faster (or slower) than wall time it runs.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runtime {

class timeline;
class metrics_endpoint;

struct progress_sample {
  std::uint64_t examples = 0;
  double fraction_done = -1;           // in [0, 1]; negative when unknown
  std::optional<double> train_ne;      // absent: not shown
  std::optional<double> sync_gap;      // mean batches between sync rounds
  // Virtual clock (sim.clock=virtual): the virtual seconds since training
  // started. The line then shows the simulated rate and virtual time against
  // wall time, and the timeline is dated in virtual time.
  std::optional<double> virtual_seconds;
  // For the timeline (report/timeline.hpp), not shown on the progress line;
  // all since the start, 0 / absent where a mode has none (sequential mode).
  std::uint64_t sync_rounds = 0;            // completed rounds, summed over trainers
  std::optional<double> blocked_fraction;   // worker time blocked on foreground sync
  std::uint64_t bytes = 0;                  // embedding lookup + push + dense sync bytes
  std::uint64_t sync_bytes = 0;             // of `bytes`: the dense sync's
  // For /metrics (report/metrics_page.hpp), all since the start: `bytes` by
  // kind, what of it went DCT-thresholded, the embedding bytes by shard
  // (index = shard; empty where unknown) and each trainer's own counters.
  std::uint64_t lookup_bytes = 0, push_bytes = 0;
  std::uint64_t dct_sync_bytes = 0, dct_embedding_bytes = 0;
  std::vector<std::uint64_t> shard_lookup_bytes, shard_push_bytes;
  struct trainer_counts {
    std::uint32_t trainer = 0;
    std::uint64_t examples = 0, sync_rounds = 0;
  };
  std::vector<trainer_counts> trainers; // ordered by trainer
  // Virtual clock: core seconds charged on each simulated host since
  // training started, and the cores of each host (the timeline's per-host
  // busy share; empty / 0 elsewhere).
  std::vector<double> host_busy_seconds;
  std::size_t cores_per_host = 0;
};

class progress_reporter {
public:
  // mode: "auto" | "live" | "plain" | "none"; label prefixes each line.
  progress_reporter(std::string mode, double interval_seconds, std::string label);

  // Cheap to call after every batch: it only formats when a line is due.
  void update(const progress_sample& s);
  // Ends the live line (newline) so later output starts on a fresh line.
  // A trainer that an earlier sample counted and `s` does not (one lost
  // during the run: only the survivors report at the end) keeps its last
  // counts in the final sample, so its /metrics series ends where it stood
  // instead of disappearing.
  void finish(const progress_sample& s);

  // Also hands every sample to `t` (which picks its own sampling times) and
  // marks the end of training in it at finish(). Not owned; null = none.
  void set_timeline(timeline* t) { timeline_ = t; }
  // Also publishes every sample, and finish()'s, to `e` (the /metrics
  // endpoint). Not owned; null = none.
  void set_metrics(metrics_endpoint* e) { metrics_ = e; }

  double elapsed_seconds() const;

private:
  std::string format(const progress_sample& s, double elapsed) const;
  bool live_ = false, enabled_ = true;
  double interval_;
  std::string label_;
  std::chrono::steady_clock::time_point start_, last_;
  std::uint64_t calls_ = 0;
  std::vector<progress_sample::trainer_counts> trainers_; // the latest sample's
  timeline* timeline_ = nullptr;
  metrics_endpoint* metrics_ = nullptr;
};

// "1.23M", "45.6k", "789"
std::string human_count(double x);

} // namespace runtime
