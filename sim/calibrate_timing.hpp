#pragma once
// `shadowsync calibrate`'s clock (sim/calibrate.hpp): seconds since a
// steady-clock instant, the median of five timed rounds, and a median.
#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace runtime::calibrate_detail {

using wall = std::chrono::steady_clock;

inline double since(wall::time_point t) {
  return std::chrono::duration<double>(wall::now() - t).count();
}

// The median of `v` (the upper of the middle two when even; 0 when empty).
inline double median_of(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median of five calls of `round` (each returns its seconds or rate).
template <class F>
double median_of_five(F&& round) {
  std::vector<double> v;
  for (int i = 0; i < 5; ++i)
    v.push_back(round());
  return median_of(std::move(v));
}

} // namespace runtime::calibrate_detail
