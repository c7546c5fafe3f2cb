// Metrics against hand-computed values.
#include <cmath>
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
