#include "model/dct_mp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/check.hpp"
#include "model/dct_mask.hpp"
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
                                std::size_t dim, sparse_vector& out, std::size_t words) {
  const std::size_t tables = tau_.size();
  SS_CHECK(n * dim <= 0xFFFFFFFFu, "a reply of at most 2^32 - 1 entries");
  SS_CHECK(words == 1 || words == 2, "keys of one or two words");
  auto table_of = [&](std::size_t i) {
    return words == 1 ? key_table(keys[i]) : std::size_t(keys[2 * i]);
  };
  std::fill(present_.begin(), present_.end(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t = table_of(i);
    SS_CHECK(t < tables, "a key of a known table");
    present_[t] = 1;
  }
  for (std::size_t t = 0; t < tables; ++t) {
    if (!present_[t])
      continue;
    sample_.clear();
    if (tau_[t].due())
      for (std::size_t i = 0; i < n; ++i)
        if (table_of(i) == t)
          sample_.insert(sample_.end(), rows + i * dim, rows + (i + 1) * dim);
    now_[t] = tau_[t].next(sample_.data(), sample_.size(), counts_);
  }
  out.size = std::uint32_t(n * dim);
  out.half = false;
  out.log8 = false;
  out.index.clear(); // the capacity stays
  out.value.clear();
  for (std::size_t i = 0; i < n; ++i)
    dct_mask::append_sent(rows + i * dim, dim, now_[table_of(i)], i * dim, out.index, out.value);
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

void drop_empty_rows(std::vector<std::uint64_t>& keys, sparse_vector& v, std::size_t dim,
                     std::size_t words) {
  SS_CHECK(dim > 0 && (words == 1 || words == 2) && keys.size() % words == 0 &&
             v.size == keys.size() / words * dim,
           "a vector over the keys' rows");
  std::size_t rows = 0;
  std::size_t last = SIZE_MAX;
  for (std::size_t k = 0; k < v.nnz(); ++k) {
    const std::size_t row = v.index[k] / dim;
    if (row != last) { // indices increase, so each row's entries are together
      for (std::size_t w = 0; w < words; ++w)
        keys[rows * words + w] = keys[row * words + w];
      ++rows;
      last = row;
    }
    v.index[k] = std::uint32_t((rows - 1) * dim + v.index[k] % dim);
  }
  keys.resize(rows * words);
  v.size = std::uint32_t(rows * dim);
}

float* dct_row_residuals::slot(const std::uint64_t* key) {
  const std::size_t offset = free_.empty() ? used_ : free_.back();
  auto [it, fresh] = at_.try_emplace(name_at(key), offset);
  if (fresh) {
    if (free_.empty()) {
      if (used_ % block_floats_ == 0)
        blocks_.push_back(std::make_unique<float[]>(block_floats_)); // zeroed
      used_ += dim_;
    } else {
      free_.pop_back();
    }
    if (capacity_ > 0) {
      const std::size_t i = offset / dim_;
      if (i >= names_.size()) {
        names_.resize(i + 1);
        state_.resize(i + 1, slot_free);
      }
      names_[i] = it->first;
    }
  }
  touch(it->second);
  return at(it->second);
}

void dct_row_residuals::set_capacity(std::size_t rows) {
  SS_CHECK(at_.empty(), "a residual map's bound is set before it holds a row");
  capacity_ = rows;
}

void dct_row_residuals::touch(std::size_t offset) {
  if (capacity_ > 0 && offset / dim_ < state_.size())
    state_[offset / dim_] = slot_used;
}

void dct_row_residuals::trim() {
  while (at_.size() > capacity_) {
    if (hand_ >= state_.size())
      hand_ = 0;
    auto& s = state_[hand_];
    if (s == slot_used) {
      s = slot_live; // a second chance
    } else if (s == slot_live) {
      at_.erase(names_[hand_]);
      free_.push_back(hand_ * dim_);
      s = slot_free;
      ++evictions_;
    }
    ++hand_;
  }
}

void dct_row_residuals::drop(const std::uint64_t* key) {
  auto it = at_.find(name_at(key));
  if (it == at_.end())
    return;
  free_.push_back(it->second);
  if (it->second / dim_ < state_.size())
    state_[it->second / dim_] = slot_free;
  at_.erase(it);
}

const float* dct_row_residuals::find(const std::uint64_t* key) const {
  auto it = at_.find(name_at(key));
  return it == at_.end() ? nullptr : at(it->second);
}

void dct_row_residuals::add_to(const std::uint64_t* keys, float* g, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float* r = find(keys + i * words_);
    if (!r)
      continue;
    for (std::size_t j = 0; j < dim_; ++j)
      g[i * dim_ + j] += r[j];
  }
}

void dct_row_residuals::add_held(const std::uint64_t* keys, float* g, std::size_t n) {
  // The rows' lookups first, each a few rows ahead of its probe's prefetch
  // (a long run's map outgrows the caches), then the residuals' adds.
  constexpr std::size_t ahead = 8;
  held_.resize(n);
  for (std::size_t i = 0; i < std::min(ahead, n); ++i)
    at_.prefetch(name_at(keys + i * words_));
  for (std::size_t i = 0; i < n; ++i) {
    if (i + ahead < n)
      at_.prefetch(name_at(keys + (i + ahead) * words_));
    const auto it = at_.find(name_at(keys + i * words_));
    held_[i] = it == at_.end() ? no_row : it->second;
    if (held_[i] != no_row)
      __builtin_prefetch(at(held_[i]));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (held_[i] == no_row)
      continue;
    const float* r = at(held_[i]);
    for (std::size_t j = 0; j < dim_; ++j)
      g[i * dim_ + j] += r[j];
  }
}

void dct_row_residuals::keep_unsent_held(const std::uint64_t* keys, const float* g,
                                         std::size_t n, const sparse_vector& sent) {
  SS_CHECK(sent.size == n * dim_, "what was sent covers the rows");
  SS_CHECK(held_.size() == n, "keep_unsent_held follows add_held of the same rows");
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // A row without a residual gets one now, in row order, as slot() gives
    // keep_unsent's rows theirs (so the offsets are the same).
    if (held_[i] != no_row)
      touch(held_[i]);
    float* r = held_[i] == no_row ? slot(keys + i * words_) : at(held_[i]);
    std::copy(g + i * dim_, g + (i + 1) * dim_, r);
    for (; k < sent.nnz() && sent.index[k] < (i + 1) * dim_; ++k)
      r[sent.index[k] - i * dim_] -= sent.value[k]; // 0, or a half's rounding error
  }
  held_.clear();
  if (capacity_ > 0)
    trim();
}

void threshold_row_push(dct_row_thresholds& tau, dct_row_residuals* residual,
                        const std::uint64_t* keys, float* grads, std::size_t n, std::size_t dim,
                        bool half, sparse_vector& out, std::size_t words) {
  if (residual)
    residual->add_held(keys, grads, n);
  tau.encode(keys, grads, n, dim, out, words);
  if (half)
    round_to_half(out); // keep_unsent keeps the rounding's error
  if (residual)
    residual->keep_unsent_held(keys, grads, n, out);
}

void dct_row_residuals::keep_unsent(const std::uint64_t* keys, const float* g, std::size_t n,
                                    const sparse_vector& sent) {
  SS_CHECK(sent.size == n * dim_, "what was sent covers the rows");
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float* r = slot(keys + i * words_);
    std::copy(g + i * dim_, g + (i + 1) * dim_, r);
    for (; k < sent.nnz() && sent.index[k] < (i + 1) * dim_; ++k)
      r[sent.index[k] - i * dim_] -= sent.value[k]; // 0, or a half's rounding error
  }
  if (capacity_ > 0)
    trim();
}

} // namespace model
