#include "model/collision_counter.hpp"

#include "model/count_min_sketch.hpp" // mix64
#include "model/shard_layout.hpp"

namespace model {

collision_counter::collision_counter(std::size_t num_tables, std::uint64_t rows_per_table)
  : rows_(rows_per_table), tag_(num_tables * rows_per_table, 0),
    count_(num_tables * rows_per_table, 0) {}

void collision_counter::add(const std::uint64_t* keys, const std::uint64_t* ids, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = key_table(keys[i]) * rows_ + key_row(keys[i]);
    const auto tag = std::uint32_t(mix64(ids[i]) >> 32);
    std::uint32_t& c = count_[r];
    if ((c & ~shared_bit) == 0)
      tag_[r] = tag;
    else if (tag_[r] != tag)
      c |= shared_bit;
    if ((c & ~shared_bit) != ~shared_bit) // saturates at 2^31 - 1 lookups a row
      ++c;
  }
}

collision_counter::totals collision_counter::count() const {
  totals t;
  for (const auto c : count_) {
    const std::uint64_t k = c & ~shared_bit;
    t.lookups += k;
    t.used_rows += k > 0;
    if (c & shared_bit) {
      t.shared_lookups += k;
      ++t.shared_rows;
    }
  }
  return t;
}

} // namespace model
