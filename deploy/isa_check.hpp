#pragma once
// The instruction-set level a binary was built for (CMake SS_ISA:
// x86-64-v3 by default, x86-64-v4, the portable x86-64, or native), checked
// against the CPU before any other code runs: a binary built for a level the
// CPU lacks would die of SIGILL somewhere in the middle of a run; it stops at
// once instead, naming the missing feature and the build option that fits.
// Every node of a cluster runs the same level (the node hello compares
// them), so every node computes the same bits.
//
// SS_CPU_HIDE=avx512f,fma (an environment variable) makes the check treat
// those features as absent: a test of the refusal on any machine.
#include <string>

namespace runtime {

// "x86-64-v3", "x86-64-v4", "x86-64", "native".
const char* isa_level();

// The features of isa_level() that this CPU lacks (after SS_CPU_HIDE),
// comma-separated; empty when it has them all.
std::string isa_missing();

} // namespace runtime
