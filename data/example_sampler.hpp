#pragma once
// The world of the synthetic data: how one Criteo-shaped example is drawn
// (DESIGN.md section 4). Labels come from the teacher (teacher.hpp).
//
// Per categorical column c: missing with probability cat_missing[c], else a
// Zipf rank over the column's vocabulary, mapped to a 32-bit value id by a
// bijection keyed by (teacher_seed, c), so the most frequent value is not id 0
// and different teachers favour different values.
// Per dense column j: missing with probability dense_missing[j], else a
// zero-inflated log-normal count floor(exp(max(0, mu_j + sd_j * z)) - 1) with
// fixed Criteo-like (mu_j, sd_j); I2 is sometimes -1 or -2.
#include "data/synthetic_options.hpp"
#include "data/synthetic_random.hpp"
#include "data/zipf.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace data {

struct synthetic_example {
  std::array<std::int64_t, synthetic_num_dense> dense{}; // raw counts; read only where present
  std::array<std::uint32_t, synthetic_num_cat> cat{};    // value ids; read only where present
  std::array<bool, synthetic_num_dense> dense_missing{};
  std::array<bool, synthetic_num_cat> cat_missing{};
  // Multi-hot columns (options.bag_size[c] > 0): column c's ids are
  // bag_ids[bag_begin[c] .. bag_begin[c + 1]), empty for a missing (empty)
  // bag and for single-hot columns, whose id is cat[c].
  std::vector<std::uint32_t> bag_ids;
  std::array<std::uint32_t, synthetic_num_cat + 1> bag_begin{};
};

// Immutable after construction; draw() is const, so one sampler may serve
// several threads, each with its own engine.
class example_sampler {
public:
  // Precondition (asserted): validate(options).empty().
  explicit example_sampler(const synthetic_options& options);

  // Draws the next example from rng. The sequence of engine calls is fixed
  // by the options, which is what makes files reproducible.
  void draw(split_mix64& rng, synthetic_example* out) const;

  std::uint64_t vocab_size(std::size_t column) const { return zipf_[column].n(); }

  // Value id of Zipf rank `rank` (1 = most frequent) in `column`; distinct
  // ranks give distinct ids.
  std::uint32_t value_id(std::size_t column, std::uint64_t rank) const;

private:
  std::vector<zipf_sampler> zipf_;                    // [26]
  std::array<std::uint64_t, synthetic_num_cat> id_key_{}; // per-column bijection keys
  std::array<double, synthetic_num_dense> dense_missing_{};
  std::array<double, synthetic_num_cat> cat_missing_{};
  bool negative_i2_ = true;
  std::array<std::uint32_t, synthetic_num_cat> bag_size_{};
  bool bag_drawn_ = false;
  bool multi_hot_ = false;
};

} // namespace data
