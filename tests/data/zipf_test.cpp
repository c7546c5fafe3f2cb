// The Zipf sampler of the synthetic generator (rejection-inversion) against
// the exact pmf.
#include "data/synthetic_random.hpp"
#include "data/zipf.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace data;

namespace {

// Chi-square statistic of observed counts against the exact Zipf pmf.
double zipf_chi_square(std::uint64_t n, double s, std::uint64_t draws, std::uint64_t seed) {
  zipf_sampler z(n, s);
  split_mix64 rng(seed);
  std::vector<double> count(n + 2, 0.0); // count[0] and count[n + 1]: out of range
  for (std::uint64_t i = 0; i < draws; ++i)
    count[std::min(z(rng), n + 1)] += 1;
  REQUIRE(count[0] == 0);
  REQUIRE(count[n + 1] == 0);
  double chi2 = 0.0;
  for (std::uint64_t k = 1; k <= n; ++k) {
    const double expected = static_cast<double>(draws) * zipf_sampler::pmf(n, s, k);
    chi2 += (count[k] - expected) * (count[k] - expected) / expected;
  }
  return chi2;
}

} // namespace

TEST_CASE("zipf sampler matches the exact pmf for n = 10") {
  // 9 degrees of freedom: the 0.999 quantile of chi-square(9) is 27.88. Skipping
  // the rejection step (accepting the hat's draws) gives 128 and 519 for two of them.
  for (double s : {0.5, 1.0, 1.1, 2.0, 3.5}) {
    CAPTURE(s);
    CHECK(zipf_chi_square(10, s, 200'000, 7) < 27.88);
  }
}

TEST_CASE("zipf sampler: exponent exactly 1 and just beside it agree") {
  // s = 1 goes through the series branch of helper1/helper2, s = 1 + 1e-6
  // through log1p/expm1. Same seed, and the pmfs differ by about 1e-5
  // relative, so the draws must be (almost) all equal.
  zipf_sampler a(1000, 1.0), b(1000, 1.0 + 1e-6);
  split_mix64 ra(3), rb(3);
  int differ = 0;
  for (int i = 0; i < 10'000; ++i)
    differ += a(ra) != b(rb);
  CHECK(differ <= 5);
}

TEST_CASE("zipf sampler: n = 1 always gives rank 1") {
  zipf_sampler z(1, 1.1);
  split_mix64 rng(1);
  std::uint64_t sum = 0;
  for (int i = 0; i < 1000; ++i)
    sum += z(rng);
  CHECK(sum == 1000u);
}

TEST_CASE("zipf sampler: top ranks and tail mass of a vocabulary of one million") {
  const std::uint64_t n = 1'000'000, draws = 1'000'000;
  const double s = 1.1;
  zipf_sampler z(n, s);
  split_mix64 rng(11);
  std::vector<double> top(6, 0.0);
  double beyond_1000 = 0;
  std::uint64_t out_of_range = 0;
  for (std::uint64_t i = 0; i < draws; ++i) {
    const auto k = z(rng);
    out_of_range += k < 1 || k > n;
    if (k <= 5)
      top[k] += 1;
    if (k > 1000)
      beyond_1000 += 1;
  }
  CHECK(out_of_range == 0u);
  // Rank 5 has p = 0.021, i.e. 21k draws, relative sd 0.7%: 3% is > 4 sd.
  const double p1 = zipf_sampler::pmf(n, s, 1); // 1 / normaliser, an O(n) sum: once
  auto pmf = [&](std::uint64_t k) { return p1 * std::pow(static_cast<double>(k), -s); };
  for (std::uint64_t k = 1; k <= 5; ++k) {
    CAPTURE(k);
    const double p = pmf(k);
    CHECK(std::fabs(top[k] / draws - p) / p < 0.03);
  }
  double head = 0;
  for (std::uint64_t k = 1; k <= 1000; ++k)
    head += pmf(k);
  // About 31% of the mass lies beyond rank 1000 (sd of the estimate 0.0005).
  CHECK(beyond_1000 / draws == doctest::Approx(1.0 - head).epsilon(0.01));
}
