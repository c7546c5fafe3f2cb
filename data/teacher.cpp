#include "data/teacher.hpp"
#include "model/check.hpp"

#include <algorithm>
#include <cmath>

namespace data {
namespace {

// Domain-separation tags: each kind of teacher parameter hashes under its own
// key, so e.g. effect_c(v) and u_{k,a}(v) are independent.
constexpr std::uint64_t tag_effect = 0x11;
constexpr std::uint64_t tag_column_weight = 0x12;
constexpr std::uint64_t tag_pairs = 0x13;
constexpr std::uint64_t tag_pair_vectors = 0x14;
constexpr std::uint64_t tag_mlp = 0x15;
constexpr std::uint64_t tag_calibration = 0x16;

// Value ids are 32-bit, so this key can never collide with a present value.
constexpr std::uint64_t missing_value_key = std::uint64_t{1} << 32;

std::uint64_t value_key(const synthetic_example& x, std::size_t c) {
  return x.cat_missing[c] ? missing_value_key : x.cat[c];
}

// The reader's transform: log(1 + max(x, 0)), an empty field as 0.
double dense_input(const synthetic_example& x, std::size_t j) {
  return x.dense_missing[j] ? 0.0 : std::log1p(static_cast<double>(std::max<std::int64_t>(x.dense[j], 0)));
}

} // namespace

teacher::teacher(const synthetic_options& o) {
  SS_CHECK(validate(o).empty(), "teacher: options validated by the caller");
  const std::uint64_t ts = o.teacher_seed;

  const std::uint64_t effect_root = hash_combine(ts, tag_effect);
  const std::uint64_t weight_root = hash_combine(ts, tag_column_weight);
  for (std::size_t c = 0; c < synthetic_num_cat; ++c) {
    effect_key_[c] = hash_combine(effect_root, c);
    effect_sd_[c] = o.cat_effect_scale * (0.25 + 0.75 * hash_to_unit(hash_combine(weight_root, c)));
    bag_scale_[c] = o.bag_size[c] > 0 ? 1.0 / std::sqrt(static_cast<double>(o.bag_size[c])) : 0.0;
  }

  // Distinct unordered pairs; terminates because count <= 325 (validated).
  split_mix64 pair_rng(hash_combine(ts, tag_pairs));
  while (pairs_.size() < o.interaction_count) {
    std::size_t a = pair_rng.next() % synthetic_num_cat;
    std::size_t b = pair_rng.next() % synthetic_num_cat;
    if (a == b)
      continue;
    if (a > b)
      std::swap(a, b);
    if (std::find(pairs_.begin(), pairs_.end(), std::make_pair(a, b)) != pairs_.end())
      continue;
    pairs_.emplace_back(a, b);
  }
  const std::uint64_t vector_root = hash_combine(ts, tag_pair_vectors);
  for (std::size_t k = 0; k < pairs_.size(); ++k) {
    const std::uint64_t pk = hash_combine(vector_root, k);
    pair_key_.push_back({hash_combine(pk, 0), hash_combine(pk, 1)});
  }
  rank_ = o.interaction_rank;
  // Var(u . v) = rank * sd^4 for independent entries, so sd^2 = scale / sqrt(rank).
  if (rank_ > 0)
    factor_sd_ = std::sqrt(o.interaction_scale / std::sqrt(static_cast<double>(rank_)));

  // He-style initialisation; the output is renormalised in calibrate().
  const std::uint64_t mlp_root = hash_combine(ts, tag_mlp);
  std::uint64_t counter = 0;
  auto draw = [&] { return hash_to_normal(hash_combine(mlp_root, counter++)); };
  for (auto& row : w1_)
    for (double& w : row)
      w = draw() * std::sqrt(2.0 / synthetic_num_dense);
  for (double& b : b1_)
    b = 0.5 * draw();
  for (double& w : w2_)
    w = draw() * std::sqrt(1.0 / hidden);
  dense_scale_ = o.dense_effect_scale;

  calibrate(o);
}

double teacher::categorical_term(const synthetic_example& x) const {
  double s = 0.0;
  for (std::size_t c = 0; c < synthetic_num_cat; ++c) {
    if (bag_scale_[c] == 0.0) {
      s += effect_sd_[c] * hash_to_normal(hash_combine(effect_key_[c], value_key(x, c)));
      continue;
    }
    double bag = 0.0;
    for (std::uint32_t i = x.bag_begin[c]; i < x.bag_begin[c + 1]; ++i)
      bag += hash_to_normal(hash_combine(effect_key_[c], x.bag_ids[i]));
    s += effect_sd_[c] * bag_scale_[c] * bag;
  }
  return s;
}

void teacher::pair_vector(const synthetic_example& x, std::size_t k, int side, double* out) const {
  const std::size_t c = side == 0 ? pairs_[k].first : pairs_[k].second;
  auto add = [&](std::uint64_t key, double w) {
    const std::uint64_t h = hash_combine(pair_key_[k][side], key);
    for (std::uint64_t r = 1; r <= rank_; ++r)
      out[r - 1] += w * hash_to_normal(splitmix64_finalize(h + r * 0x9E3779B97F4A7C15ULL));
  };
  std::fill(out, out + rank_, 0.0);
  if (bag_scale_[c] == 0.0) {
    add(value_key(x, c), 1.0);
    return;
  }
  for (std::uint32_t i = x.bag_begin[c]; i < x.bag_begin[c + 1]; ++i)
    add(x.bag_ids[i], bag_scale_[c]);
}

double teacher::interaction_term(const synthetic_example& x) const {
  double s = 0.0;
  for (std::size_t k = 0; k < pairs_.size(); ++k) {
    if (bag_scale_[pairs_[k].first] != 0.0 || bag_scale_[pairs_[k].second] != 0.0) {
      double a[64], b[64]; // rank <= 64 (validated)
      pair_vector(x, k, 0, a);
      pair_vector(x, k, 1, b);
      for (std::size_t r = 0; r < rank_; ++r)
        s += a[r] * b[r];
      continue;
    }
    const std::uint64_t ha = hash_combine(pair_key_[k][0], value_key(x, pairs_[k].first));
    const std::uint64_t hb = hash_combine(pair_key_[k][1], value_key(x, pairs_[k].second));
    for (std::uint64_t r = 1; r <= rank_; ++r) {
      // Entry r of each vector: one more finalisation of the value's hash.
      const std::uint64_t step = r * 0x9E3779B97F4A7C15ULL;
      s += hash_to_normal(splitmix64_finalize(ha + step)) * hash_to_normal(splitmix64_finalize(hb + step));
    }
  }
  return s * factor_sd_ * factor_sd_;
}

double teacher::mlp_raw(const synthetic_example& x) const {
  std::array<double, synthetic_num_dense> in{}; // [13], standardised
  for (std::size_t j = 0; j < synthetic_num_dense; ++j)
    in[j] = (dense_input(x, j) - in_mean_[j]) * in_inv_sd_[j];
  double out = 0.0;
  for (std::size_t h = 0; h < hidden; ++h) {
    double a = b1_[h];
    for (std::size_t j = 0; j < synthetic_num_dense; ++j)
      a += w1_[h][j] * in[j];
    out += w2_[h] * std::max(a, 0.0);
  }
  return out;
}

double teacher::dense_term(const synthetic_example& x) const {
  if (dense_scale_ == 0.0)
    return 0.0;
  return dense_scale_ * (mlp_raw(x) - out_mean_) * out_inv_sd_;
}

void teacher::calibrate(const synthetic_options& o) {
  const example_sampler sampler(o);
  split_mix64 rng(hash_combine(o.teacher_seed, tag_calibration));
  std::vector<synthetic_example> xs(o.calibration_rows);
  for (auto& x : xs)
    sampler.draw(rng, &x);
  const double n = static_cast<double>(xs.size());
  auto inv_sd = [](double var) { return var > 1e-24 ? 1.0 / std::sqrt(var) : 0.0; };

  // 1. Standardise the MLP inputs (a constant column gets weight 0).
  for (std::size_t j = 0; j < synthetic_num_dense; ++j) {
    double sum = 0.0, sum2 = 0.0;
    for (const auto& x : xs) {
      const double v = dense_input(x, j);
      sum += v;
      sum2 += v * v;
    }
    in_mean_[j] = sum / n;
    in_inv_sd_[j] = inv_sd(std::max(0.0, sum2 / n - in_mean_[j] * in_mean_[j]));
  }
  // 2. Centre and scale the MLP output.
  {
    double sum = 0.0, sum2 = 0.0;
    for (const auto& x : xs) {
      const double v = mlp_raw(x);
      sum += v;
      sum2 += v * v;
    }
    out_mean_ = sum / n;
    out_inv_sd_ = inv_sd(std::max(0.0, sum2 / n - out_mean_ * out_mean_));
  }
  // 3. Bisection on the bias: mean sigmoid(z + b) increases with b.
  std::vector<double> z(xs.size());
  double z_abs_max = 0.0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    z[i] = logit_without_bias(xs[i]);
    z_abs_max = std::max(z_abs_max, std::fabs(z[i]));
  }
  auto mean_p = [&](double b) {
    double s = 0.0;
    for (double zi : z)
      s += sigmoid(zi + b);
    return s / n;
  };
  // At +-(max|z| + 40) every probability is within e^-40 of 0 or 1.
  double lo = -z_abs_max - 40.0, hi = z_abs_max + 40.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi)
      break; // interval is one ulp wide
    (mean_p(mid) < o.target_ctr ? lo : hi) = mid;
  }
  bias_ = 0.5 * (lo + hi);
}

} // namespace data
