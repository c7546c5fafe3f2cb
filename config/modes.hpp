#pragma once
// The options whose value picks a way of running, as enums: parsed once in
// train_config.cpp, compared as enums everywhere else.

namespace runtime {

// cluster.mode: the whole actor cluster in one process, or one thread and no
// actors. (A multi-node run is a simulated one whose roles are spread over
// processes by deploy/.)
enum class cluster_mode { simulated, sequential };
const char* to_string(cluster_mode m); // "simulated" | "sequential"

// scheduler.policy: CAF's work-stealing or work-sharing scheduler.
enum class scheduler_policy { stealing, sharing };

// sync.eval-model: which dense parameters the evaluation uses (automatic:
// the trainers' average, or trainer 0 without sync).
enum class eval_model { automatic, average, trainer0, centre };
const char* to_string(eval_model m); // "auto" | "average" | "trainer0" | "centre"

} // namespace runtime
