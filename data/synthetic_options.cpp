#include "data/synthetic_options.hpp"

#include <algorithm>
#include <cmath>
#include <charconv>

namespace data {
namespace {

// 0-based categorical columns from the smallest to the largest cardinality in
// Criteo Kaggle (C9 has 3 values, C3 about 10 million).
constexpr std::array<std::size_t, synthetic_num_cat> criteo_cardinality_order = {
    8,  19, 16, 22, 21, 5,  13, 24, 4,  1,  7,  0,  18,
    12, 17, 10, 6,  14, 9,  25, 23, 3,  15, 20, 11, 2};

constexpr double smallest_vocab = 10.0;
constexpr double largest_vocab_at_scale_1 = 1e6;

bool is_rate(double p) { return p >= 0.0 && p <= 1.0; }

} // namespace

std::string validate(const synthetic_options& o) {
  auto nonneg = [](double x) { return x >= 0.0 && std::isfinite(x); };
  if (o.rows == 0)
    return "rows must be >= 1";
  if (!(o.zipf_exponent > 0.0) || !std::isfinite(o.zipf_exponent))
    return "zipf_exponent must be > 0";
  if (!(o.vocab_scale > 0.0) || std::round(largest_vocab_at_scale_1 * o.vocab_scale) >= 4294967296.0)
    return "vocab_scale must be > 0 and keep the largest vocabulary below 2^32";
  if (!nonneg(o.cat_effect_scale) || !nonneg(o.interaction_scale) || !nonneg(o.dense_effect_scale))
    return "effect scales must be finite and >= 0";
  if (o.interaction_count > synthetic_num_cat * (synthetic_num_cat - 1) / 2)
    return "interaction_count must be <= 325 (the number of column pairs)";
  if (o.interaction_count > 0 && o.interaction_rank == 0)
    return "interaction_rank must be >= 1";
  if (!(o.target_ctr > 0.0 && o.target_ctr < 1.0))
    return "target_ctr must be in (0, 1)";
  if (o.calibration_rows == 0)
    return "calibration_rows must be >= 1";
  for (double p : o.dense_missing)
    if (!is_rate(p))
      return "dense_missing rates must be in [0, 1]";
  for (double p : o.cat_missing)
    if (!is_rate(p))
      return "cat_missing rates must be in [0, 1]";
  for (std::uint32_t k : o.bag_size)
    if (k > synthetic_max_bag_size)
      return "bag sizes must be <= " + std::to_string(synthetic_max_bag_size);
  if (has_multi_hot(o) && o.interaction_rank > 64)
    return "interaction_rank must be <= 64 with multi-hot columns";
  return {};
}

bool has_multi_hot(const synthetic_options& o) {
  for (std::uint32_t k : o.bag_size)
    if (k > 0)
      return true;
  return false;
}

std::string parse_bag_sizes(const std::string& text, std::array<std::uint32_t, synthetic_num_cat>* out) {
  if (text.empty() || text == "none") {
    out->fill(0);
    return {};
  }
  if (text == "mlperf") {
    *out = mlperf_bag_sizes;
    return {};
  }
  std::array<std::uint32_t, synthetic_num_cat> sizes{};
  std::size_t n = 0, at = 0;
  for (;;) {
    auto comma = text.find(',', at);
    if (comma == std::string::npos)
      comma = text.size();
    const std::string item = text.substr(at, comma - at);
    std::uint32_t v = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || r.ec != std::errc() || r.ptr != item.data() + item.size() || v > synthetic_max_bag_size)
      return "expected 'none', 'mlperf' or 26 comma-separated integers from 0 to " +
             std::to_string(synthetic_max_bag_size) + ", got '" + item + "' as item " + std::to_string(n + 1);
    if (n == synthetic_num_cat)
      return "expected 26 bag sizes, got more";
    sizes[n++] = v;
    if (comma == text.size())
      break;
    at = comma + 1;
  }
  if (n != synthetic_num_cat)
    return "expected 26 bag sizes, got " + std::to_string(n);
  *out = sizes;
  return {};
}

std::array<std::uint64_t, synthetic_num_cat> synthetic_vocab_sizes(const synthetic_options& o) {
  const double hi = std::max(smallest_vocab, std::round(largest_vocab_at_scale_1 * o.vocab_scale));
  std::array<std::uint64_t, synthetic_num_cat> sizes{};
  for (std::size_t i = 0; i < synthetic_num_cat; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(synthetic_num_cat - 1);
    double v = std::round(smallest_vocab * std::pow(hi / smallest_vocab, t));
    if (i + 1 == synthetic_num_cat)
      v = hi; // exact at the top despite pow rounding
    sizes[criteo_cardinality_order[i]] = static_cast<std::uint64_t>(v);
  }
  return sizes;
}

} // namespace data
