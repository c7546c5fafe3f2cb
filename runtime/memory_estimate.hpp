#pragma once
// An up-front estimate of a run's parameter memory, so that a configuration
// that cannot fit is refused with a clear message (exit 2) instead of dying
// in std::bad_alloc halfway through building the model.
//
// Estimate for a one-process run (sequential or simulated cluster), in bytes:
//   embedding: tables x rows-per-table x (dim + optimiser floats per row) x 4
//   dense:     P x 4 x (trainers x 4 + 2)  (per trainer: replica, optimiser
//              accumulators, the syncer's snapshot and reduction buffer; plus
//              the initial parameters and the EASGD centre), P = dense params.
// Activations and data buffers are small beside these and are not counted.
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/train_config.hpp"

namespace runtime {

struct memory_estimate {
  double embedding_bytes = 0;
  double dense_bytes = 0;
  double total() const { return embedding_bytes + dense_bytes; }
};

memory_estimate estimate_memory(const train_config& cfg);

// The machine's physical memory in bytes (sysconf), 0 when unknown.
double physical_memory_bytes();

// An error naming the key to change when estimate_memory(cfg) exceeds
// `available` bytes (nothing is checked when available is 0).
std::optional<std::string> check_memory(const train_config& cfg, double available);

// "1.5 GiB", "3.2 TiB".
std::string human_bytes(double bytes);

} // namespace runtime
