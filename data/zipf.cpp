#include "data/zipf.hpp"
#include "model/check.hpp"

#include <cmath>

namespace data {
namespace {

// log1p(x) / x, with its series near 0 (this is what makes s = 1 exact).
double helper1(double x) {
  if (std::fabs(x) > 1e-8)
    return std::log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

// expm1(x) / x, with its series near 0.
double helper2(double x) {
  if (std::fabs(x) > 1e-8)
    return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

} // namespace

zipf_sampler::zipf_sampler(std::uint64_t n, double exponent) : n_(n), exponent_(exponent) {
  SS_CHECK(n >= 1, "zipf_sampler: n must be >= 1");
  SS_CHECK(exponent > 0.0 && std::isfinite(exponent), "zipf_sampler: exponent must be > 0");
  h_integral_x1_ = h_integral(1.5) - 1.0;
  h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
  threshold_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double zipf_sampler::h_integral(double x) const {
  const double log_x = std::log(x);
  return helper2((1.0 - exponent_) * log_x) * log_x;
}

double zipf_sampler::h(double x) const { return std::exp(-exponent_ * std::log(x)); }

double zipf_sampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - exponent_);
  if (t < -1.0) // rounding can push t just below the domain of log1p
    t = -1.0;
  return std::exp(helper1(t) * x);
}

double zipf_sampler::pmf(std::uint64_t n, double exponent, std::uint64_t k) {
  SS_CHECK(k >= 1 && k <= n, "zipf_sampler: rank in [1, n]");
  double z = 0.0;
  for (std::uint64_t j = n; j >= 1; --j) // smallest terms first
    z += std::pow(static_cast<double>(j), -exponent);
  return std::pow(static_cast<double>(k), -exponent) / z;
}

} // namespace data
