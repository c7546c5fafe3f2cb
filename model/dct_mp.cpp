#include "model/dct_mp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/check.hpp"
#include "model/embedding.hpp"

namespace model {

dct_row_thresholds::dct_row_thresholds(std::size_t num_tables, double keep,
                                       std::uint64_t refresh, std::uint64_t seed)
    : now_(num_tables, 0.0f), present_(num_tables, 0) {
  tau_.reserve(num_tables);
  for (std::size_t t = 0; t < num_tables; ++t)
    tau_.emplace_back(keep, refresh, seed + t);
}

void dct_row_thresholds::encode(const std::uint64_t* keys, const float* rows, std::size_t n,
                                std::size_t dim, sparse_vector& out) {
  const std::size_t tables = tau_.size();
  SS_CHECK(n * dim <= 0xFFFFFFFFu, "a reply of at most 2^32 - 1 entries");
  std::fill(present_.begin(), present_.end(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t = key_table(keys[i]);
    SS_CHECK(t < tables, "a key of a known table");
    present_[t] = 1;
  }
  for (std::size_t t = 0; t < tables; ++t) {
    if (!present_[t])
      continue;
    sample_.clear();
    if (tau_[t].due())
      for (std::size_t i = 0; i < n; ++i)
        if (key_table(keys[i]) == t)
          sample_.insert(sample_.end(), rows + i * dim, rows + (i + 1) * dim);
    now_[t] = tau_[t].next(sample_.data(), sample_.size(), counts_);
  }
  out.size = std::uint32_t(n * dim);
  out.half = false;
  out.log8 = false;
  out.index.clear();
  out.value.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const float tau = now_[key_table(keys[i])];
    const float* r = rows + i * dim;
    for (std::size_t j = 0; j < dim; ++j)
      if (r[j] != 0.0f && std::fabs(r[j]) >= tau) {
        out.index.push_back(std::uint32_t(i * dim + j));
        out.value.push_back(r[j]);
      }
  }
  counts_.values += out.nnz();
  counts_.entries += n * dim;
}

void mask_gradients(const float* rows, const float* grads, std::size_t n, sparse_vector& out) {
  SS_CHECK(n <= 0xFFFFFFFFu, "at most 2^32 - 1 entries");
  out.size = std::uint32_t(n);
  out.half = false;
  out.log8 = false;
  out.index.clear();
  out.value.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (rows[i] != 0.0f && grads[i] != 0.0f) {
      out.index.push_back(std::uint32_t(i));
      out.value.push_back(grads[i]);
    }
}

void drop_empty_rows(std::vector<std::uint64_t>& keys, sparse_vector& v, std::size_t dim) {
  SS_CHECK(dim > 0 && v.size == keys.size() * dim, "a vector over the keys' rows");
  std::size_t rows = 0;
  std::size_t last = SIZE_MAX;
  for (std::size_t k = 0; k < v.nnz(); ++k) {
    const std::size_t row = v.index[k] / dim;
    if (row != last) { // indices increase, so each row's entries are together
      keys[rows++] = keys[row];
      last = row;
    }
    v.index[k] = std::uint32_t((rows - 1) * dim + v.index[k] % dim);
  }
  keys.resize(rows);
  v.size = std::uint32_t(rows * dim);
}

float* dct_row_residuals::slot(std::uint64_t key) {
  auto [it, fresh] = at_.try_emplace(key, pool_.size());
  if (fresh)
    pool_.resize(pool_.size() + dim_, 0.0f);
  return pool_.data() + it->second;
}

void dct_row_residuals::add_to(const std::uint64_t* keys, float* g, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    auto it = at_.find(keys[i]);
    if (it == at_.end())
      continue;
    const float* r = pool_.data() + it->second;
    for (std::size_t j = 0; j < dim_; ++j)
      g[i * dim_ + j] += r[j];
  }
}

void dct_row_residuals::keep_unsent(const std::uint64_t* keys, const float* g, std::size_t n,
                                    const sparse_vector& sent) {
  SS_CHECK(sent.size == n * dim_, "what was sent covers the rows");
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float* r = slot(keys[i]);
    std::copy(g + i * dim_, g + (i + 1) * dim_, r);
    for (; k < sent.nnz() && sent.index[k] < (i + 1) * dim_; ++k)
      r[sent.index[k] - i * dim_] -= sent.value[k]; // 0, or a half's rounding error
  }
}

} // namespace model
