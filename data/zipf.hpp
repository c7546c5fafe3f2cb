#pragma once
// Zipf distribution over ranks 1..n: P(k) = k^-s / sum_{j=1..n} j^-s.
//
// Sampling is rejection-inversion (Hoermann & Derflinger 1996, "Rejection-
// inversion to generate variates from monotone discrete distributions"), as
// in Apache Commons RNG: O(1) expected time per draw, O(1) memory (no table
// over the vocabulary), any n >= 1 and any exponent s > 0 including s = 1
// (the s -> 1 limit is handled by series expansions, not a special case).
// The expected number of uniforms per draw is close to 1 for all s.
#include <cstdint>

namespace data {

class zipf_sampler {
public:
  // Preconditions (asserted): n >= 1; exponent > 0 and finite.
  zipf_sampler(std::uint64_t n, double exponent);

  std::uint64_t n() const { return n_; }
  double exponent() const { return exponent_; }

  // One rank in [1, n]. Engine: anything with `double uniform()` in [0, 1).
  template <class Engine>
  std::uint64_t operator()(Engine& rng) const {
    for (;;) {
      // u is uniform in (h_integral_x1_, h_integral_n_], the area under the
      // hat function h(x) = x^-s from 0.5-ish to n + 0.5.
      const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
      const double x = h_integral_inverse(u);
      const double kd = x + 0.5;
      std::uint64_t k;
      if (!(kd >= 1.0)) // also catches NaN from rounding at the ends
        k = 1;
      else if (kd >= static_cast<double>(n_))
        k = n_;
      else
        k = static_cast<std::uint64_t>(kd);
      const double kf = static_cast<double>(k);
      // Squeeze first (cheap, accepts most draws), then the exact test.
      if (kf - x <= threshold_ || u >= h_integral(kf + 0.5) - h(kf))
        return k;
    }
  }

  // Exact pmf P(k) for 1 <= k <= n, by an O(n) sum: for tests.
  static double pmf(std::uint64_t n, double exponent, std::uint64_t k);

private:
  // H(x) = integral of h(x) = x^-s: (x^(1-s) - 1) / (1 - s), log x at s = 1.
  double h_integral(double x) const;
  double h(double x) const;
  double h_integral_inverse(double x) const;

  std::uint64_t n_;
  double exponent_;
  double h_integral_x1_; // H(1.5) - 1
  double h_integral_n_;  // H(n + 0.5)
  double threshold_;     // squeeze: 2 - H^-1(H(2.5) - h(2))
};

} // namespace data
