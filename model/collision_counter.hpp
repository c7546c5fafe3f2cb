#pragma once
// Row sharing in hashed embedding tables (embedding.collisions; the metrics
// JSON's embedding object, kind "hashed"): which rows serve more than one id
// of the run, and the share of lookups that read such a row.
//
// Per row a 32-bit tag of the first id it served (mix64(id)'s high bits)
// and a lookup count whose top bit says "another id came here": 8 bytes a
// row, one read and one write per lookup. A row is shared once an id with
// another tag reaches it; two ids with the same tag (probability 2^-32 a
// pair) count as one, so the share is a lower bound by that much. A lookup
// counts as shared when its row is shared at the end of the run (the id
// that arrives later makes the earlier lookups of the row shared too).
//
// Not thread-safe: one owner (the sequential engine's thread).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace model {

class collision_counter {
public:
  collision_counter(std::size_t num_tables, std::uint64_t rows_per_table);

  // keys[i]: the row key (model::row_key) that ids[i] was hashed to, n of each.
  void add(const std::uint64_t* keys, const std::uint64_t* ids, std::size_t n);

  struct totals {
    std::uint64_t lookups = 0, shared_lookups = 0; // lookups; of them, of shared rows
    std::uint64_t used_rows = 0, shared_rows = 0;  // rows looked up; of them, shared
  };
  totals count() const; // one pass over the rows

private:
  static constexpr std::uint32_t shared_bit = 0x80000000u;
  std::uint64_t rows_;
  std::vector<std::uint32_t> tag_, count_; // per row
};

} // namespace model
