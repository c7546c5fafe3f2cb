#pragma once
// Central finite differences for float code: d f / d x_i ~ (f(x+h) - f(x-h)) / 2h.
// Float rounding limits the agreement to about 1e-3 relative, so comparisons
// use a mixed absolute/relative tolerance.
#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <vector>

#include <doctest/doctest.h>

namespace testing {

// n values drawn from N(0, scale): test inputs and parameters.
inline std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v)
    x = d(rng);
  return v;
}

// Checks analytic[i] against finite differences of f for every i < n of x.
// f must recompute the loss (in double) from the current contents of x.
inline void check_gradient(float* x, const float* analytic, std::size_t n,
                           const std::function<double()>& f, const char* what,
                           double h = 1e-2, double atol = 2e-4, double rtol = 2e-2) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float saved = x[i];
    x[i] = saved + float(h);
    const double up = f();
    x[i] = saved - float(h);
    const double down = f();
    x[i] = saved;
    const double fd = (up - down) / (2 * h);
    const double err = std::abs(fd - analytic[i]);
    if (err > atol + rtol * std::abs(fd)) {
      if (bad < 5)
        MESSAGE(what << "[" << i << "]: analytic " << analytic[i] << " vs numeric " << fd);
      ++bad;
    }
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << n << " coordinates disagree");
}

} // namespace testing
