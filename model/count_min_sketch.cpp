#include "model/count_min_sketch.hpp"

#include <algorithm>

#include "model/check.hpp"

namespace model {

count_min_sketch::count_min_sketch(std::size_t width, std::size_t depth) : depth_(depth) {
  SS_CHECK(depth >= 1 && depth <= 8, "count_min_sketch: depth in 1..8");
  width_ = 64;
  shift_ = 58;
  while (width_ < width) {
    width_ <<= 1;
    --shift_;
  }
  counts_.assign(width_ * depth_, 0);
}

std::size_t count_min_sketch::slot(std::uint64_t id, std::size_t row) const {
  // Row r hashes id with its own constant: independent enough rows for a sketch.
  return row * width_ + std::size_t(mix64(id ^ (0xD6E8FEB86659FD93ULL * (row + 1))) >> shift_);
}

std::uint32_t count_min_sketch::estimate(std::uint64_t id) const {
  std::uint32_t m = UINT16_MAX;
  for (std::size_t r = 0; r < depth_; ++r)
    m = std::min<std::uint32_t>(m, counts_[slot(id, r)]);
  return m;
}

std::uint32_t count_min_sketch::add(std::uint64_t id) {
  // Conservative update: only the counters at the minimum grow, which keeps
  // the over-count of ids sharing counters low.
  const std::uint32_t next = std::min<std::uint32_t>(estimate(id) + 1, UINT16_MAX);
  for (std::size_t r = 0; r < depth_; ++r) {
    auto& c = counts_[slot(id, r)];
    c = std::uint16_t(std::max<std::uint32_t>(c, next));
  }
  if (++additions_ >= 10 * width_)
    halve();
  return next;
}

void count_min_sketch::halve() {
  for (auto& c : counts_)
    c = std::uint16_t(c >> 1);
  additions_ = 0;
}

} // namespace model
