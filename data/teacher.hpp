#pragma once
// The planted teacher of the synthetic data (DESIGN.md section 4): the true
// click logit of every example, known exactly, so the Bayes-optimal logloss
// of a generated file is known too.
//
//   logit(x) = bias
//            + sum_c effect_c(v_c)                         (26 per-value effects)
//
// A multi-hot column c (options.bag_size[c] = k > 0) enters through its bag B:
// effect_c(B) = sum_{v in B} effect_c(v) / sqrt(k), and in an interaction
// u(B) = sum_{v in B} u(v) / sqrt(k) (an empty bag gives 0). The scale is per
// column, not per bag, so a model that sums embeddings over the bag can
// represent the teacher exactly.
//
//            + sum_k u_{k,a}(v_a) . u_{k,b}(v_b)           (K factorised pairs)
//            + dense_scale * (mlp(std(log1p(max(I, 0)))) - m) / s   (13 -> 8 ReLU -> 1)
//
// effect_c(v) and u_{k,side}(v) are hashes of (teacher_seed, column or pair,
// value id): nothing proportional to a vocabulary is stored. A missing
// categorical value uses its own key (outside the 32-bit id range), a missing
// dense value enters the MLP as 0, like the reader's transform of an empty
// field. The input standardisation, (m, s) and the bias come from a
// calibration sample of calibration_rows examples drawn from a stream seeded
// by teacher_seed; the bias is solved by bisection so that the mean
// probability over that sample equals target_ctr.
#include "data/example_sampler.hpp"
#include "data/synthetic_options.hpp"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace data {

// Immutable after construction; all methods are const and thread-safe.
class teacher {
public:
  static constexpr std::size_t hidden = 8; // MLP width

  // Only teacher_seed, the effect options, target_ctr, calibration_rows and
  // the world options (vocabularies, missing rates) matter; rows and seed do
  // not. Precondition (asserted): validate(options).empty().
  explicit teacher(const synthetic_options& options);

  double logit(const synthetic_example& x) const { return bias_ + logit_without_bias(x); }
  double probability(const synthetic_example& x) const { return sigmoid(logit(x)); }

  double bias() const { return bias_; }
  // The categorical column pairs (0-based, a < b) of the interactions.
  const std::vector<std::pair<std::size_t, std::size_t>>& interaction_pairs() const { return pairs_; }

  // The three parts of the logit, for tests and diagnostics.
  double categorical_term(const synthetic_example& x) const;
  double interaction_term(const synthetic_example& x) const;
  double dense_term(const synthetic_example& x) const;

private:
  double logit_without_bias(const synthetic_example& x) const {
    return categorical_term(x) + interaction_term(x) + dense_term(x);
  }
  double mlp_raw(const synthetic_example& x) const;
  void calibrate(const synthetic_options& options);

  std::array<std::uint64_t, synthetic_num_cat> effect_key_{};
  std::array<double, synthetic_num_cat> effect_sd_{};     // cat_effect_scale * w_c
  std::array<double, synthetic_num_cat> bag_scale_{};     // 1 / sqrt(bag_size[c]); 0 for one id
  // Entries 1..rank of side `side` of pair k's vector for column c of x
  // (summed and scaled over a bag), into out[0..rank).
  void pair_vector(const synthetic_example& x, std::size_t k, int side, double* out) const;
  std::vector<std::pair<std::size_t, std::size_t>> pairs_; // [K]
  std::vector<std::array<std::uint64_t, 2>> pair_key_;   // [K], one key per side
  std::size_t rank_ = 0;
  double factor_sd_ = 0.0; // per vector entry, sqrt(interaction_scale / sqrt(rank))

  double dense_scale_ = 0.0;
  std::array<double, synthetic_num_dense> in_mean_{}, in_inv_sd_{};
  std::array<std::array<double, synthetic_num_dense>, hidden> w1_{}; // [8, 13]
  std::array<double, hidden> b1_{}, w2_{};                          // [8], [8]
  double out_mean_ = 0.0, out_inv_sd_ = 0.0;
  double bias_ = 0.0;
};

} // namespace data
