#pragma once
// The simulated cluster (cluster.mode=simulated): every role of DESIGN.md
// section 2 as CAF actors in one actor system. The coordinator here builds the
// cluster from the configuration (shards first, then trainers), wires the
// syncers' ring, starts training, polls progress, runs the coordinated stop of
// the sync rounds, gathers the trainers' reports and the shards' state,
// evaluates, and stops every actor in reverse order.
#include <optional>
#include <string>

#include "report/progress.hpp"
#include "report/run_metrics.hpp"
#include "config/train_config.hpp"

namespace runtime {

// Runs the whole job. Returns an error message when training failed (a shard
// or trainer died, a request timed out, bad input in strict mode).
std::optional<std::string> run_simulated(const train_config& cfg, progress_reporter& progress,
                                         run_metrics& out);

} // namespace runtime
