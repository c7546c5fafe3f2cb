#pragma once
// A count-min sketch (Cormode and Muthukrishnan, 2005) with conservative
// update and periodic halving (TinyLFU's "reset", Einziger et al., 2017):
// the bounded counter of how often each 64-bit id was seen, used by
// dynamic_table to admit an id only once it is frequent enough.
//
// depth rows of `width` saturating 16-bit counters (width a power of two).
// estimate(id) >= the id's true count since the last halvings, halved as they
// were; it over-counts only where every row's counter is shared with other
// ids. After 10 x width additions every counter is halved, so the sketch
// follows a changing stream and its counters stay small. Memory: depth x
// width x 2 bytes. Deterministic: the same additions give the same counters.
// Not thread-safe (one owner mutates it; dynamic_table.hpp).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace model {

class count_min_sketch {
public:
  // width is rounded up to a power of two, at least 64; depth in 1..8.
  explicit count_min_sketch(std::size_t width = 1024, std::size_t depth = 4);

  // Counts one occurrence of id and returns its new estimate.
  std::uint32_t add(std::uint64_t id);
  std::uint32_t estimate(std::uint64_t id) const;
  // Halves every counter (also done after every 10 x width additions).
  void halve();

  std::size_t width() const { return width_; }
  std::size_t depth() const { return depth_; }
  // The counters, [depth * width] row-major, and the additions since the
  // last halving: all of the sketch's state (checkpoints).
  std::vector<std::uint16_t>& counters() { return counts_; }
  const std::vector<std::uint16_t>& counters() const { return counts_; }
  std::uint64_t additions() const { return additions_; }
  void set_additions(std::uint64_t n) { additions_ = n; }
  std::size_t bytes() const { return counts_.size() * sizeof(std::uint16_t); }

private:
  std::size_t slot(std::uint64_t id, std::size_t row) const;
  std::size_t width_, depth_;
  unsigned shift_; // 64 - log2(width)
  std::vector<std::uint16_t> counts_;
  std::uint64_t additions_ = 0;
};

// SplitMix64's finaliser (Steele, Lea and Flood, 2014): a bijective mix of
// 64 bits; the sketch's row hashes and dynamic rows' initial values use it.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

} // namespace model
