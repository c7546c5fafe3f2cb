#pragma once
// Eigen's matrix products split the inner (summation) dimension into blocks
// whose size comes from the CPU's L1 and L2 cache sizes, and the block size
// fixes the order of the sums: two machines with other caches compute other
// bits for the same product (a 512-wide layer is one block with a 48 KiB L1
// and two with 32 KiB). pin_gemm_blocking() sets fixed cache sizes, the same
// on every node, so that the same instruction-set level gives the same bits
// everywhere. Call it once at start, before the first product.
#include <cstddef>

namespace model {

// The sizes Eigen is told (those of the machines this project is measured
// on: L1d 48 KiB, L2 1 MiB; L3 only shapes the outer loops, not the sums).
constexpr std::ptrdiff_t pinned_l1_bytes = 48 * 1024;
constexpr std::ptrdiff_t pinned_l2_bytes = 1024 * 1024;
constexpr std::ptrdiff_t pinned_l3_bytes = 32 * 1024 * 1024;

// Also links model/aligned_heap.cpp, the 64-byte aligned global operator
// new that keeps Eigen's reductions in one order whatever the heap addresses.
void pin_gemm_blocking();

// true; referenced so that the aligned operator new is linked in.
bool aligned_heap_installed();

} // namespace model
