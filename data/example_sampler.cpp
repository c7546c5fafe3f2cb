#include "data/example_sampler.hpp"
#include "model/check.hpp"

#include <algorithm>
#include <cmath>

namespace data {
namespace {

constexpr std::uint64_t tag_value_ids = 0x76616c75652d6964ULL; // "value-id"

// Location and spread of log(1 + count) per dense column, roughly Criteo's
// (I5 is the large one, I10 and I12 are mostly 0 or 1).
constexpr std::array<double, synthetic_num_dense> dense_mu = {0.5, 1.5, 1.8, 1.7, 7.5, 3.5, 1.3,
                                                              2.2, 3.8, 0.3, 1.0, 0.2, 1.5};
constexpr std::array<double, synthetic_num_dense> dense_sd = {1.0, 1.8, 1.2, 1.0, 2.0, 1.6, 1.3,
                                                              1.1, 1.4, 0.7, 0.9, 0.8, 1.1};
constexpr std::size_t i2 = 1;

} // namespace

example_sampler::example_sampler(const synthetic_options& o)
    : dense_missing_(o.dense_missing), cat_missing_(o.cat_missing), negative_i2_(o.negative_i2),
      bag_size_(o.bag_size), bag_drawn_(o.bag_drawn), multi_hot_(has_multi_hot(o)) {
  SS_CHECK(validate(o).empty(), "example_sampler: options validated by the caller");
  const auto sizes = synthetic_vocab_sizes(o);
  zipf_.reserve(synthetic_num_cat);
  const std::uint64_t key = hash_combine(o.teacher_seed, tag_value_ids);
  for (std::size_t c = 0; c < synthetic_num_cat; ++c) {
    zipf_.emplace_back(sizes[c], o.zipf_exponent);
    id_key_[c] = hash_combine(key, c);
  }
}

std::uint32_t example_sampler::value_id(std::size_t column, std::uint64_t rank) const {
  // xor, mix32, add, mix32: each step is a bijection on 32-bit words.
  const auto k = id_key_[column];
  std::uint32_t x = static_cast<std::uint32_t>(rank - 1) ^ static_cast<std::uint32_t>(k);
  x = mix32(x) + static_cast<std::uint32_t>(k >> 32);
  return mix32(x);
}

void example_sampler::draw(split_mix64& rng, synthetic_example* out) const {
  if (multi_hot_)
    out->bag_ids.clear();
  for (std::size_t c = 0; c < synthetic_num_cat; ++c) {
    // A zero rate consumes no uniform: faster, and still a fixed sequence.
    const bool missing = cat_missing_[c] > 0.0 && rng.uniform() < cat_missing_[c];
    out->cat_missing[c] = missing;
    if (bag_size_[c] == 0) {
      out->cat[c] = missing ? 0 : value_id(c, zipf_[c](rng));
      out->bag_begin[c + 1] = static_cast<std::uint32_t>(out->bag_ids.size());
      continue;
    }
    out->cat[c] = 0;
    if (!missing) {
      const std::uint32_t k = bag_size_[c];
      std::uint32_t n = k;
      if (bag_drawn_ && k > 1)
        n = 1 + std::min<std::uint32_t>(2 * k - 2, static_cast<std::uint32_t>(rng.uniform() * (2 * k - 1)));
      for (std::uint32_t i = 0; i < n; ++i)
        out->bag_ids.push_back(value_id(c, zipf_[c](rng)));
    }
    out->bag_begin[c + 1] = static_cast<std::uint32_t>(out->bag_ids.size());
  }
  for (std::size_t j = 0; j < synthetic_num_dense; ++j) {
    const bool missing = dense_missing_[j] > 0.0 && rng.uniform() < dense_missing_[j];
    out->dense_missing[j] = missing;
    if (missing) {
      out->dense[j] = 0;
      continue;
    }
    // count = floor(e^t - 1): 0 below t = ln 2 (no exp needed), and t is
    // capped so the count fits an int64 whatever the normal draw.
    const double t = std::min(dense_mu[j] + dense_sd[j] * rng.normal(), 40.0);
    out->dense[j] = t < 0.6931471805599453 ? 0 : static_cast<std::int64_t>(std::exp(t) - 1.0);
    if (j == i2 && negative_i2_) {
      const double u = rng.uniform();
      if (u < 0.05)
        out->dense[j] = u < 0.04 ? -1 : -2;
    }
  }
}

} // namespace data
