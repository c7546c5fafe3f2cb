#pragma once
// Options of the synthetic Criteo-shaped generator (DESIGN.md section 4).
//
// Two seeds with distinct jobs:
//   - teacher_seed fixes the *world*: which value ids are frequent, the
//     teacher's weights, the interaction pairs and the calibrated bias.
//   - seed fixes the *sample*: which examples and labels are drawn.
// A train file and an eval file therefore share a teacher_seed and differ in
// seed. Equal options give byte-identical files (for one build).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace data {

inline constexpr std::size_t synthetic_num_dense = 13; // I1..I13
inline constexpr std::size_t synthetic_num_cat = 26;   // C1..C26

struct synthetic_options {
  std::uint64_t rows = 1'000'000; // lines written; must be >= 1
  std::uint64_t seed = 1;         // sample stream (examples and labels)
  std::uint64_t teacher_seed = 42; // world and teacher parameters

  // Categorical values: Zipf(zipf_exponent) over per-column vocabularies,
  // log-spaced from 10 to round(1e6 * vocab_scale) and assigned to columns in
  // the order of Criteo Kaggle's cardinalities (C3 largest, C9 smallest).
  double zipf_exponent = 1.1; // > 0; 1.0 is allowed
  double vocab_scale = 1.0;   // > 0; largest vocabulary must stay < 2^32

  // Teacher logit = bias + sum_c effect_c + sum_k interaction_k + dense MLP.
  // effect_c(v) ~ N(0, (cat_effect_scale * w_c)^2) per value id (Irwin-Hall
  // approximation of the normal, see synthetic_random.hpp), with a
  // per-column weight w_c uniform in [0.25, 1]. A missing value has an effect
  // of its own, drawn the same way.
  double cat_effect_scale = 0.4;
  // interaction_k = u_a(v_a) . u_b(v_b) for a pair of distinct categorical
  // columns (a, b); rank-r vectors drawn per (pair, side, value), scaled so
  // each term has standard deviation interaction_scale.
  std::size_t interaction_count = 4; // <= 325 (= 26 choose 2)
  std::size_t interaction_rank = 4;  // >= 1
  double interaction_scale = 0.5;
  // A 13 -> 8 (ReLU) -> 1 MLP of the standardised log(1 + max(x, 0)) dense
  // features, rescaled to mean 0 and standard deviation dense_effect_scale
  // over the calibration sample.
  double dense_effect_scale = 0.5;

  // The bias is solved by bisection so that the mean true probability over
  // calibration_rows examples (a stream seeded from teacher_seed) is
  // target_ctr.
  double target_ctr = 0.25; // in (0, 1)
  std::uint64_t calibration_rows = 50'000; // >= 1

  // Per-column probability of an empty field; defaults are close to Criteo
  // Kaggle's train set.
  std::array<double, synthetic_num_dense> dense_missing = {
      0.45, 0.0, 0.21, 0.22, 0.03, 0.22, 0.04, 0.0005, 0.04, 0.45, 0.04, 0.77, 0.22};
  std::array<double, synthetic_num_cat> cat_missing = {
      0.0, 0.0,  0.03, 0.03, 0.0, 0.12, 0.0,  0.0,  0.0, 0.0,  0.0,  0.03, 0.0,
      0.0, 0.0,  0.03, 0.0,  0.0, 0.44, 0.44, 0.03, 0.76, 0.0, 0.03, 0.44, 0.44};
  // I2 is sometimes -1 or -2, as in Criteo (the reader's transform maps
  // negatives to log(1 + 0) = 0).
  bool negative_i2 = true;

  // Multi-hot columns (DESIGN.md section 15): bag_size[c] > 0 makes column c
  // a bag of ids, written separated by '|' (0, the default, is one id). With
  // bag_drawn false every bag holds bag_size[c] ids; with it true a bag's size
  // is uniform in 1 .. 2 * bag_size[c] - 1 (mean bag_size[c]). Ids of a bag
  // are independent Zipf draws, so an id may repeat. cat_missing[c] of a
  // multi-hot column is the rate of an empty bag (an empty field).
  std::array<std::uint32_t, synthetic_num_cat> bag_size{};
  bool bag_drawn = false;
};

inline constexpr std::uint32_t synthetic_max_bag_size = 1024;
// MLPerf DLRM-DCNv2's bag sizes of the 26 Criteo multi-hot fields.
inline constexpr std::array<std::uint32_t, synthetic_num_cat> mlperf_bag_sizes = {
    3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};

// Reads a bag-size list: "" or "none" (no multi-hot column), "mlperf"
// (mlperf_bag_sizes) or 26 comma-separated integers from 0 to
// synthetic_max_bag_size. Empty when it parses, else why not.
std::string parse_bag_sizes(const std::string& text, std::array<std::uint32_t, synthetic_num_cat>* out);

// true when any column is multi-hot.
bool has_multi_hot(const synthetic_options& options);

// Empty when the options are usable, else a message naming the bad option.
std::string validate(const synthetic_options& options);

// Vocabulary size of each categorical column (C1..C26) for these options.
std::array<std::uint64_t, synthetic_num_cat> synthetic_vocab_sizes(const synthetic_options& options);

} // namespace data
