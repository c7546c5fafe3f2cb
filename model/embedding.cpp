#include "model/embedding.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace model {

void make_keys(const std::uint64_t* hashes, std::size_t n_ids, std::size_t num_tables,
               std::uint64_t rows_per_table, std::uint64_t* keys) {
  std::size_t t = 0;
  for (std::size_t i = 0; i < n_ids; ++i) {
    keys[i] = row_key(t, hashes[i] % rows_per_table);
    if (++t == num_tables)
      t = 0;
  }
}

void sparse_index::build(const std::uint64_t* keys, std::size_t n) {
  unique_.clear();
  inverse_.resize(n);
  std::size_t cap = 16;
  while (cap < 2 * n)
    cap <<= 1;
  slots_.assign(cap, 0);
  const std::size_t mask = cap - 1;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = keys[i];
    std::size_t h = static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ULL) >> 20) & mask;
    while (true) {
      const std::uint32_t s = slots_[h];
      if (s == 0) {
        unique_.push_back(k);
        slots_[h] = static_cast<std::uint32_t>(unique_.size());
        inverse_[i] = static_cast<std::uint32_t>(unique_.size() - 1);
        break;
      }
      if (unique_[s - 1] == k) {
        inverse_[i] = s - 1;
        break;
      }
      h = (h + 1) & mask;
    }
  }
}

void batch_lookup::lookup(const std::uint64_t* hashes, std::size_t examples, const arch& a,
                          const embedding_tables& t) {
  const std::size_t n = examples * a.num_tables;
  keys.resize(n);
  make_keys(hashes, n, a.num_tables, a.rows_per_table, keys.data());
  index.build(keys.data(), n);
  unique_rows.resize(index.unique().size() * a.dim);
  t.gather(index, unique_rows.data());
}

embedding_tables::embedding_tables(std::size_t num_tables, std::uint64_t rows_per_table,
                                   std::size_t dim, std::size_t state_per_row)
  : num_tables_(num_tables), rows_(rows_per_table), dim_(dim), state_(state_per_row),
    weights_(num_tables * rows_per_table * dim, 0.0f),
    accum_(num_tables * rows_per_table * state_per_row, 0.0f) {}

void embedding_tables::init(std::uint64_t seed, float bound) {
  std::mt19937_64 rng(seed);
  if (bound <= 0.0f)
    bound = std::sqrt(1.0f / static_cast<float>(rows_));
  std::uniform_real_distribution<float> u(-bound, bound);
  for (auto& w : weights_)
    w = u(rng);
  std::fill(accum_.begin(), accum_.end(), 0.0f);
}

// Rows are scattered over a table far larger than the caches, so each row
// and accumulator is fetched a few iterations ahead of its use.
constexpr std::size_t prefetch_distance = 8;

void embedding_tables::gather(const sparse_index& idx, float* unique_rows) const {
  const auto& u = idx.unique();
  const std::size_t n = u.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + prefetch_distance < n)
      __builtin_prefetch(row(u[i + prefetch_distance]));
    std::memcpy(unique_rows + i * dim_, row(u[i]), sizeof(float) * dim_);
  }
}

void embedding_tables::apply(const sparse_index& idx, const float* grad_unique,
                             const sparse_optimizer& opt) {
  const auto& u = idx.unique();
  const std::size_t n = u.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + prefetch_distance < n) {
      __builtin_prefetch(row(u[i + prefetch_distance]), 1);
      if (state_)
        __builtin_prefetch(accumulator(u[i + prefetch_distance]), 1);
    }
    opt.apply(row(u[i]), accumulator(u[i]), grad_unique + i * dim_, dim_);
  }
}

} // namespace model
