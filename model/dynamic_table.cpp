#include "model/dynamic_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "model/check.hpp"

namespace model {

namespace {

std::size_t sketch_width(const dynamic_settings& s) {
  return s.admit_after > 1 ? std::size_t(std::min<std::uint64_t>(s.max_rows, 1u << 26)) : 64;
}

} // namespace

dynamic_table::dynamic_table(const dynamic_settings& s, std::size_t dim, std::size_t state_per_row,
                             std::uint64_t seed, std::size_t table)
  : s_(s), dim_(dim), state_(state_per_row), seed_(mix64(seed) ^ mix64(table + 0x51ED)),
    sketch_(sketch_width(s), 4) {
  SS_CHECK(s.max_rows >= 1 && s.max_rows < no_row, "dynamic_table: max_rows in 1..2^32-2");
  // Address space only (up to 2^24 rows): pages are touched as rows are
  // admitted, so memory follows the rows in use, without the copies of a
  // growing vector.
  const std::size_t reserved = std::size_t(std::min<std::uint64_t>(s.max_rows, 1u << 24));
  weights_.reserve(reserved * dim_);
  accum_.reserve(reserved * state_);
}

std::uint32_t dynamic_table::train_lookup(std::uint64_t id, std::uint64_t now) {
  ++stats_.lookups;
  const auto it = slots_.find(id);
  std::uint32_t slot = it == slots_.end() ? no_row : it->second;
  if (slot == no_row && (s_.admit_after <= 1 || sketch_.add(id) >= s_.admit_after))
    slot = admit(id, now);
  if (slot == no_row) {
    ++stats_.missing;
    return no_row;
  }
  if (count_[slot] != UINT32_MAX)
    ++count_[slot];
  last_[slot] = now;
  return slot;
}

std::uint32_t dynamic_table::new_slot() {
  if (!free_.empty()) {
    const std::uint32_t s = free_.back();
    free_.pop_back();
    return s;
  }
  const auto s = std::uint32_t(ids_.size());
  ids_.push_back(0);
  last_.push_back(0);
  count_.push_back(0);
  weights_.resize(weights_.size() + dim_);
  accum_.resize(accum_.size() + state_);
  return s;
}

std::uint32_t dynamic_table::admit(std::uint64_t id, std::uint64_t now) {
  if (slots_.size() >= s_.max_rows)
    evict_some(now);
  if (slots_.size() >= s_.max_rows)
    return no_row; // every row is used by this batch
  const std::uint32_t s = new_slot();
  slots_.emplace(id, s);
  ids_[s] = id;
  count_[s] = 0;
  last_[s] = now;
  // Initial values from (seed, table, id): the same wherever and whenever
  // the id is admitted. 24 random bits per value, as a float's mantissa.
  const float bound = std::sqrt(1.0f / float(s_.init_rows ? s_.init_rows : s_.max_rows));
  std::uint64_t x = seed_ ^ mix64(id);
  float* w = row(s);
  for (std::size_t k = 0; k < dim_; ++k) {
    x = mix64(x);
    const float u = float(x >> 40) * (1.0f / 16777216.0f); // [0, 1)
    w[k] = -bound + 2.0f * bound * u;
  }
  std::fill_n(accumulator(s), state_, 0.0f);
  ++stats_.admissions;
  return s;
}

void dynamic_table::release(std::uint32_t slot) {
  slots_.erase(ids_[slot]);
  free_.push_back(slot);
  ++stats_.evictions;
}

void dynamic_table::evict_some(std::uint64_t now) {
  // Rows this batch has not used, least used first (then longest unseen,
  // then lowest id: a total order, so the rows chosen do not depend on the
  // map's layout).
  std::vector<std::uint32_t> cand;
  cand.reserve(slots_.size());
  for (const auto& [id, s] : slots_)
    if (last_[s] < now)
      cand.push_back(s);
  const std::size_t k = std::min<std::size_t>(cand.size(), std::max<std::uint64_t>(1, s_.max_rows / 32));
  if (k == 0)
    return;
  auto less = [this](std::uint32_t a, std::uint32_t b) {
    return std::tie(count_[a], last_[a], ids_[a]) < std::tie(count_[b], last_[b], ids_[b]);
  };
  std::nth_element(cand.begin(), cand.begin() + std::ptrdiff_t(k - 1), cand.end(), less);
  cand.resize(k);
  std::sort(cand.begin(), cand.end(), less); // the free list's order: deterministic
  for (auto it = cand.rbegin(); it != cand.rend(); ++it)
    release(*it);
  for (const auto& [id, s] : slots_)
    count_[s] >>= 1; // the decay
}

void dynamic_table::expire(std::uint64_t now) {
  if (s_.ttl == 0 || now < next_expiry_)
    return;
  next_expiry_ = now + std::max<std::uint64_t>(1, s_.ttl / 8);
  std::vector<std::uint32_t> old;
  for (const auto& [id, s] : slots_)
    if (now - last_[s] > s_.ttl)
      old.push_back(s);
  std::sort(old.begin(), old.end(), [this](std::uint32_t a, std::uint32_t b) {
    return ids_[a] > ids_[b];
  });
  for (const auto s : old)
    release(s);
  stats_.expired += old.size();
}

std::size_t dynamic_table::bytes() const {
  return (weights_.size() + accum_.size()) * sizeof(float) +
         ids_.size() * (2 * sizeof(std::uint64_t) + sizeof(std::uint32_t)) +
         slots_.capacity() * (sizeof(std::uint64_t) + sizeof(std::uint32_t) + 1) +
         sketch_.bytes();
}

std::vector<dynamic_table::saved_row> dynamic_table::saved_rows() const {
  std::vector<saved_row> out;
  out.reserve(slots_.size());
  for (const auto& [id, s] : slots_)
    out.push_back({id, last_[s], count_[s]});
  std::sort(out.begin(), out.end(),
            [](const saved_row& a, const saved_row& b) { return a.id < b.id; });
  return out;
}

void dynamic_table::insert_row(const saved_row& r, const float* weights, const float* state) {
  SS_CHECK(slots_.size() < s_.max_rows && !slots_.count(r.id),
           "dynamic_table::insert_row: room and a new id");
  const std::uint32_t s = new_slot();
  slots_.emplace(r.id, s);
  ids_[s] = r.id;
  count_[s] = r.count;
  last_[s] = r.last;
  std::memcpy(row(s), weights, dim_ * sizeof(float));
  if (state_)
    std::memcpy(accumulator(s), state, state_ * sizeof(float));
}

} // namespace model
