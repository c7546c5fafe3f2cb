// Compiled for the portable x86-64 level whatever SS_ISA is (CMakeLists.txt),
// so the check itself runs on any CPU; it runs as a constructor of priority
// 101, before the default-priority constructors of the code built for SS_ISA.
#include "deploy/isa_check.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifndef SS_ISA_NAME
#define SS_ISA_NAME "x86-64"
#endif

namespace runtime {

namespace {

bool hidden(const char* feature) {
  const char* hide = std::getenv("SS_CPU_HIDE");
  if (!hide)
    return false;
  const std::size_t n = std::strlen(feature);
  for (const char* p = hide; *p;) {
    const char* end = std::strchr(p, ',');
    const std::size_t len = end ? std::size_t(end - p) : std::strlen(p);
    if (len == n && std::strncmp(p, feature, n) == 0)
      return true;
    if (!end)
      break;
    p = end + 1;
  }
  return false;
}

void need(std::string& missing, const char* feature, bool present) {
  if (present && !hidden(feature))
    return;
  missing += (missing.empty() ? "" : ",");
  missing += feature;
}

} // namespace

const char* isa_level() { return SS_ISA_NAME; }

std::string isa_missing() {
  __builtin_cpu_init();
  std::string m;
  const std::string level = SS_ISA_NAME;
  if (level == "x86-64-v3" || level == "x86-64-v4") {
    // x86-64-v2 and v3 (the features the compiler may use at this level)
    need(m, "sse4.2", __builtin_cpu_supports("sse4.2"));
    need(m, "popcnt", __builtin_cpu_supports("popcnt"));
    need(m, "avx", __builtin_cpu_supports("avx"));
    need(m, "avx2", __builtin_cpu_supports("avx2"));
    need(m, "fma", __builtin_cpu_supports("fma"));
    need(m, "bmi", __builtin_cpu_supports("bmi"));
    need(m, "bmi2", __builtin_cpu_supports("bmi2"));
  }
  if (level == "x86-64-v4") {
    need(m, "avx512f", __builtin_cpu_supports("avx512f"));
    need(m, "avx512bw", __builtin_cpu_supports("avx512bw"));
    need(m, "avx512cd", __builtin_cpu_supports("avx512cd"));
    need(m, "avx512dq", __builtin_cpu_supports("avx512dq"));
    need(m, "avx512vl", __builtin_cpu_supports("avx512vl"));
  }
  return m;
}

namespace {

__attribute__((constructor(101))) void check_isa_at_start() {
  const std::string missing = isa_missing();
  if (missing.empty())
    return;
  const std::string level = SS_ISA_NAME;
  std::fprintf(stderr,
               "shadowsync: this binary is built for the instruction-set level %s, and this CPU "
               "lacks %s.\nBuild for this CPU with cmake -DSS_ISA=%s (every node of a cluster "
               "must use the same level).\n",
               SS_ISA_NAME, missing.c_str(),
               level == "x86-64-v4" ? "x86-64-v3 (AVX2, or x86-64 without it)" : "x86-64");
  std::fflush(stderr);
  std::_Exit(1);
}

} // namespace

} // namespace runtime
