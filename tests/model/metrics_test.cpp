// Metrics against hand-computed values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "model/metrics.hpp"

TEST_CASE("BCE with logits and binary entropy") {
  CHECK(model::bce_with_logit(0.0, 1.0) == doctest::Approx(0.693147)); // ln 2 at logit 0
  CHECK(model::bce_with_logit(0.0, 0.0) == doctest::Approx(0.693147));
  // logit 2, label 1: ln(1 + e^-2) = 0.126928
  CHECK(model::bce_with_logit(2.0, 1.0) == doctest::Approx(0.126928));
  // No overflow for large logits: label 0 at logit 100 costs 100.
  CHECK(model::bce_with_logit(100.0, 0.0) == doctest::Approx(100.0));
  CHECK(model::binary_entropy(0.5) == doctest::Approx(0.693147));
  // H(0.25) = -(0.25 ln 0.25 + 0.75 ln 0.75) = 0.562335
  CHECK(model::binary_entropy(0.25) == doctest::Approx(0.562335));
  CHECK(model::binary_entropy(0.0) == 0.0);
}

TEST_CASE("NE of predicting the base rate is 1, calibration 1") {
  model::ne_accumulator acc;
  // 1 positive in 4; predicting p = 0.25 everywhere gives logloss = H(0.25).
  const double p = 0.25, z = std::log(p / (1 - p));
  for (double y : {1.0, 0.0, 0.0, 0.0})
    acc.add(model::bce_with_logit(z, y), p, y);
  CHECK(acc.ne() == doctest::Approx(1.0));
  CHECK(acc.calibration() == doctest::Approx(1.0));
  CHECK(acc.base_rate() == doctest::Approx(0.25));
  model::ne_accumulator empty;
  CHECK(std::isnan(empty.ne()));
}

TEST_CASE("exact AUC: hand-counted pairs and ties") {
  // positives at 0.9 and 0.4, negatives at 0.8, 0.3, 0.1:
  // pairs (pos > neg): 0.9 beats 3, 0.4 beats 2 -> 5 of 6.
  std::vector<float> p{0.9f, 0.8f, 0.4f, 0.3f, 0.1f}, y{1, 0, 1, 0, 0};
  CHECK(model::auc_exact(p, y) == doctest::Approx(5.0 / 6.0));
  // All scores tied: every pair counts one half.
  std::vector<float> t{0.5f, 0.5f, 0.5f, 0.5f}, ty{1, 0, 1, 0};
  CHECK(model::auc_exact(t, ty) == doctest::Approx(0.5));
  // One tie between a positive and a negative: 3 wins + 0.5 of 4 pairs = 0.875.
  std::vector<float> q{0.9f, 0.5f, 0.5f, 0.1f}, qy{1, 1, 0, 0};
  CHECK(model::auc_exact(q, qy) == doctest::Approx(0.875));
  std::vector<float> one{0.3f}, oy{1};
  CHECK(std::isnan(model::auc_exact(one, oy)));
}

TEST_CASE("evaluator merges partial results exactly") {
  model::evaluator a, b, all;
  const float logits[] = {2.0f, -1.0f, 0.5f, -3.0f, 1.0f, 0.0f};
  const float labels[] = {1, 0, 1, 0, 0, 1};
  for (int i = 0; i < 6; ++i) {
    (i < 3 ? a : b).add(logits[i], labels[i]);
    all.add(logits[i], labels[i]);
  }
  a.merge(b);
  auto r1 = a.result(), r2 = all.result();
  CHECK(r1.examples == 6);
  CHECK(r1.auc == doctest::Approx(r2.auc));
  CHECK(r1.ne == doctest::Approx(r2.ne));
  // Ranks by logit: positives 2.0, 0.5, 0.0 vs negatives 1.0, -1.0, -3.0 -> 7 of 9 pairs.
  CHECK(r1.auc == doctest::Approx(7.0 / 9.0));
}

namespace {

// GAUC the slow way: every user's positive/negative pairs counted one by one
// (a win 1, a tie 1/2), AUC_u = wins / pairs, weighted by the user's examples.
double gauc_brute_force(const std::vector<float>& p, const std::vector<float>& y,
                        const std::vector<std::uint64_t>& u) {
  double weighted = 0, weights = 0;
  std::vector<std::uint64_t> seen;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (std::find(seen.begin(), seen.end(), u[i]) != seen.end())
      continue;
    seen.push_back(u[i]);
    double wins = 0, pairs = 0, n = 0;
    for (std::size_t a = 0; a < p.size(); ++a) {
      if (u[a] != u[i])
        continue;
      n += 1;
      for (std::size_t b = 0; b < p.size(); ++b)
        if (u[b] == u[i] && y[a] > 0.5f && y[b] < 0.5f) {
          pairs += 1;
          wins += p[a] > p[b] ? 1.0 : p[a] == p[b] ? 0.5 : 0.0;
        }
    }
    if (pairs > 0) {
      weighted += n * wins / pairs;
      weights += n;
    }
  }
  return weights > 0 ? weighted / weights : std::nan("");
}

} // namespace

TEST_CASE("GAUC: impression-weighted per-user AUC, one-class users left out") {
  // User 7: positives 0.9, 0.4; negatives 0.8, 0.3, 0.1 -> AUC 5/6, 5 examples.
  // User 3: positive 0.5 tied with negative 0.5, negative 0.2 -> (1 + 0.5)/2 = 0.75, 3 examples.
  // User 9: two positives only -> no AUC, left out (examples and all).
  // GAUC = (5 * 5/6 + 3 * 0.75) / 8 = (4.1667 + 2.25) / 8 = 0.802083.
  std::vector<float> p{0.9f, 0.5f, 0.8f, 0.7f, 0.4f, 0.5f, 0.3f, 0.2f, 0.1f, 0.6f};
  std::vector<float> y{1, 1, 0, 1, 1, 0, 0, 0, 0, 1};
  std::vector<std::uint64_t> u{7, 3, 7, 9, 7, 3, 7, 3, 7, 9};
  const auto g = model::gauc_exact(p, y, u);
  CHECK(g.gauc == doctest::Approx((5.0 * 5.0 / 6.0 + 3.0 * 0.75) / 8.0).epsilon(1e-12));
  CHECK(g.gauc == doctest::Approx(gauc_brute_force(p, y, u)).epsilon(1e-12));
  CHECK(g.users == 3);
  CHECK(g.counted == 2);
  CHECK(g.examples == 8);
  // Not the pooled AUC: across users, user 9's 0.7 and 0.6 would count.
  CHECK(std::abs(g.gauc - model::auc_exact(p, y)) > 0.01);
  // No user with both classes: NaN, nothing counted.
  const auto none = model::gauc_exact({0.1f, 0.2f}, {1, 0}, {1, 2});
  CHECK(std::isnan(none.gauc));
  CHECK(none.counted == 0);
  CHECK(none.users == 2);
  // One user: GAUC is that user's AUC.
  CHECK(model::gauc_exact(p, y, std::vector<std::uint64_t>(p.size(), 5)).gauc ==
        doctest::Approx(model::auc_exact(p, y)).epsilon(1e-12));
}

TEST_CASE("GAUC matches the pair count on random data with ties, in any example order") {
  std::uint64_t s = 12345; // a small LCG: the test's data, not the model's
  auto next = [&] { s = s * 6364136223846793005ULL + 1442695040888963407ULL; return s >> 33; };
  std::vector<float> p, y;
  std::vector<std::uint64_t> u;
  for (int i = 0; i < 600; ++i) {
    p.push_back(float(next() % 20) / 20.0f); // 20 score levels: many ties
    y.push_back(next() % 3 == 0 ? 1.0f : 0.0f);
    u.push_back(next() % 40 * 0x9E3779B97F4A7C15ULL); // 40 users, spread keys
  }
  const auto g = model::gauc_exact(p, y, u);
  CHECK(g.gauc == doctest::Approx(gauc_brute_force(p, y, u)).epsilon(1e-12));
  CHECK(g.counted > 30);
  // Reversed order (as another reader order or a merge would give): bit-equal.
  std::vector<float> rp(p.rbegin(), p.rend()), ry(y.rbegin(), y.rend());
  std::vector<std::uint64_t> ru(u.rbegin(), u.rend());
  CHECK(model::gauc_exact(rp, ry, ru).gauc == g.gauc);
  // Through evaluators split in two and merged: the same value, and grouped.
  model::evaluator a, b;
  for (std::size_t i = 0; i < p.size(); ++i)
    (i % 2 ? a : b).add(p[i], y[i], u[i]);
  a.merge(b);
  const auto r = a.result();
  CHECK(r.grouped);
  CHECK(r.gauc.gauc == g.gauc);
  model::evaluator plain;
  plain.add(0.5f, 1.0f);
  CHECK_FALSE(plain.result().grouped);
}
