#pragma once
// `shadowsync calibrate`'s clock (sim/calibrate.hpp): seconds since a
// steady-clock instant, and the median of five timed rounds.
#include <algorithm>
#include <chrono>
#include <vector>

namespace runtime::calibrate_detail {

using wall = std::chrono::steady_clock;

inline double since(wall::time_point t) {
  return std::chrono::duration<double>(wall::now() - t).count();
}

// The median of five calls of `round` (each returns its seconds or rate).
template <class F>
double median_of_five(F&& round) {
  std::vector<double> v;
  for (int i = 0; i < 5; ++i)
    v.push_back(round());
  std::sort(v.begin(), v.end());
  return v[2];
}

} // namespace runtime::calibrate_detail
