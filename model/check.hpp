#pragma once
// SS_CHECK(cond, what): the project's one way to state an invariant.
//
// It is compiled into every build type. Release keeps NDEBUG (so Eigen's own
// per-element asserts stay out of the hot loops), which removes `assert`:
// the project therefore uses SS_CHECK, never `assert`. A broken invariant is
// a bug: it prints file:line, the condition and `what` to stderr and aborts.
// Expected failures (bad input, a peer down, a timeout) are errors as values,
// not checks.
//
// Header-only and std-only, so model/ and data/ can use it.
#include <cstdio>
#include <cstdlib>

namespace model {

[[noreturn]] inline void check_failed(const char* cond, const char* what, const char* file,
                                      int line) {
  std::fprintf(stderr, "%s:%d: invariant violated: %s (%s)\n", file, line, what, cond);
  std::fflush(stderr);
  std::abort();
}

} // namespace model

#define SS_CHECK(cond, what)                                                                       \
  ((cond) ? static_cast<void>(0) : ::model::check_failed(#cond, what, __FILE__, __LINE__))
