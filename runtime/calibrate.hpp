#pragma once
// `shadowsync calibrate`: the constants of the virtual clock's cost model
// (sim.gflops, sim.memory-gbps, sim.message-us; runtime/virtual_time.hpp),
// measured on one core of this machine:
//   gflops       3 x the model's forward FLOPs per example (what a worker's
//                batch charges) x examples / seconds of the sequential
//                engine's training step on synthetic batches: the effective
//                rate of a whole step (forward, backward, dense and sparse
//                updates), not a GEMM peak
//   memory-gbps  bytes read + written per second by memcpy of 64 MiB
//   message-us   seconds per message of a ping-pong between two CAF actors
//                on one scheduler thread (send, schedule, handle)
// Each is the median of five timed rounds.
#include <optional>
#include <string>

#include "runtime/train_config.hpp"

namespace runtime {

struct calibration {
  double gflops = 0, memory_gbps = 0, message_us = 0;
  double seconds = 0; // the measurement's own wall time
};

std::optional<std::string> calibrate(const train_config& cfg, calibration& out);

} // namespace runtime
