// The synchronisation rules against hand-computed values.
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/sync_rules.hpp"

TEST_CASE("EASGD centre step: d = alpha (w - c), c += d") {
  std::vector<float> c{1.0f, 0.0f}, w{3.0f, -2.0f}, d(2);
  model::easgd_centre_step(c.data(), w.data(), 0.25f, d.data(), 2);
  CHECK(d[0] == doctest::Approx(0.5));  // 0.25 * (3 - 1)
  CHECK(d[1] == doctest::Approx(-0.5)); // 0.25 * (-2 - 0)
  CHECK(c[0] == doctest::Approx(1.5));
  CHECK(c[1] == doctest::Approx(-0.5));
}

TEST_CASE("BMUF: Nesterov and classic targets") {
  // w_g = 1, Delta = 0.5, the block started at 1.25 (= w_g + eta Delta), avg = 2,
  // eta = 0.5, zeta = 1: G = 2 - 1.25 = 0.75; Delta = 0.25 + 0.75 = 1;
  // w_g = 2; Nesterov target = 2 + 0.5 = 2.5.
  model::bmuf_params p{0.5f, 1.0f, true};
  std::vector<float> g{1.0f}, m{0.5f}, start{1.25f}, avg{2.0f};
  model::bmuf_step(p, g.data(), m.data(), start.data(), avg.data(), 1);
  CHECK(m[0] == doctest::Approx(1.0));
  CHECK(g[0] == doctest::Approx(2.0));
  CHECK(start[0] == doctest::Approx(2.5));
  // Classic: the block starts at w_g = 1: G = 1; Delta = 1.25; w_g = target = 2.25.
  p.nesterov = false;
  std::vector<float> g2{1.0f}, m2{0.5f}, start2{1.0f};
  model::bmuf_step(p, g2.data(), m2.data(), start2.data(), avg.data(), 1);
  CHECK(start2[0] == doctest::Approx(2.25));
}

TEST_CASE("BMUF with no local progress settles instead of drifting") {
  // Every block returns exactly where it started (avg == start): the momentum
  // must decay geometrically (eta^k), not persist.
  model::bmuf_params p{0.5f, 1.0f, true};
  std::vector<float> g{0.0f}, m{1.0f}, start{0.5f};
  for (int k = 0; k < 20; ++k) {
    std::vector<float> avg = start;
    model::bmuf_step(p, g.data(), m.data(), start.data(), avg.data(), 1);
  }
  CHECK(std::abs(m[0]) < 1e-5); // 0.5^20 ~ 1e-6
}

TEST_CASE("merge modes: delta keeps concurrent updates, overwrite drops them") {
  // snapshot 1.0, live replica moved on to 1.5 during the round, target 3.0
  std::vector<float> w{1.5f}, snap{1.0f}, target{3.0f};
  model::merge(model::merge_mode::delta, w.data(), snap.data(), target.data(), 1);
  CHECK(w[0] == doctest::Approx(3.5)); // 1.5 + (3.0 - 1.0)
  std::vector<float> w2{1.5f};
  model::merge(model::merge_mode::overwrite, w2.data(), snap.data(), target.data(), 1);
  CHECK(w2[0] == doctest::Approx(3.0));
}

TEST_CASE("merge delta: an entry unchanged since the snapshot takes the target exactly") {
  // Pairs where s + (t - s) != t in float exist in plenty; the merge must
  // give t for each (a foreground round's replica does not move meanwhile).
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(10000), snap(10000), target(10000);
  std::size_t inexact = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = snap[i] = u(rng);
    target[i] = u(rng) * 1e-3f;
    const float naive = snap[i] + (target[i] - snap[i]);
    inexact += naive != target[i];
  }
  REQUIRE(inexact > 100); // the case exists
  model::merge(model::merge_mode::delta, w.data(), snap.data(), target.data(), w.size());
  CHECK(w == target);
}

TEST_CASE("algorithm names round-trip") {
  for (const char* n : {"none", "s-easgd", "s-ma", "s-bmuf", "fr-easgd", "fr-ma", "fr-bmuf"})
    CHECK(model::to_string(*model::parse_sync_algorithm(n)) == n);
  CHECK_FALSE(model::parse_sync_algorithm("easgd"));
  CHECK(model::is_foreground(model::sync_algorithm::fr_ma));
  CHECK(model::uses_ring(model::sync_algorithm::s_bmuf));
  CHECK_FALSE(model::uses_ring(model::sync_algorithm::s_easgd));
}

TEST_CASE("split_range covers [0, n) with near-equal contiguous parts") {
  auto r = model::split_range(10, 3); // sizes 4, 3, 3
  REQUIRE(r.size() == 3);
  CHECK(r[0].offset == 0);
  CHECK(r[0].size == 4);
  CHECK(r[1].offset == 4);
  CHECK(r[2].offset == 7);
  CHECK(r[2].size == 3);
  auto e = model::split_range(2, 4); // two ranges of 1, two empty
  CHECK(e[3].size == 0);
  CHECK(e[1].offset + e[1].size == 2);
}
