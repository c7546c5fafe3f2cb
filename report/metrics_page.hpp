#pragma once
// The /metrics page (report/metrics_endpoint.hpp) in the Prometheus text
// exposition format, version 0.0.4: one `# HELP` and one `# TYPE` line per
// metric family, then its samples. Counters end in `_total`; rates, NE, the
// sync gap and the blocked share are gauges. Every sample carries the
// snapshot's labels (`role`, and `node` in multi-node runs); per-trainer
// samples add `trainer`, per-shard ones `shard`, per-kind ones `kind`.
//
// Live families come from the latest progress sample (the progress line's
// cadence): examples, examples/s, train NE, sync rounds, gap and blocked
// share, bytes by kind (lookup, push, dense_sync), embedding bytes by
// `shard`, each `trainer`'s examples and sync rounds, DCT bytes (until the
// final metrics give them), virtual seconds. The run's final
// metrics (at the end of training and evaluation) add eval NE and AUC (and
// GAUC with data.user), bytes
// by link kind (lookup, push, dense sync) and DCT, checkpoint, recovery and
// failure counters, and examples/s per trainer. A family with nothing known
// yet is left out (an absent series, not a false zero). Pure: no clock, no
// I/O; unit-tested in tests/report.
#include <optional>
#include <string>
#include <vector>

#include "report/progress.hpp"
#include "report/run_metrics.hpp"

namespace runtime {

struct metrics_snapshot {
  // Label values: `role` on every sample (coordinator, sequential, node
  // roles); `node` only when non-empty (a multi-node run's node name).
  std::string role = "coordinator";
  std::string node;
  std::optional<progress_sample> live;
  // Wall seconds from the start of training to `live` (its rate's span
  // unless the sample carries virtual seconds).
  double live_wall_seconds = 0;
  // The finished run's metrics; set once, after training (and evaluation).
  std::optional<run_metrics> final_metrics;
};

std::string prometheus_text(const metrics_snapshot& s);

// `v` escaped for a label value: backslash, double quote and newline.
std::string escape_label_value(const std::string& v);

} // namespace runtime
