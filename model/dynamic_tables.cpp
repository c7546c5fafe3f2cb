#include "model/dynamic_tables.hpp"

#include <algorithm>
#include <cstring>

namespace model {

dynamic_tables::dynamic_tables(std::size_t num_tables, const dynamic_settings& s,
                               std::size_t dim, std::size_t state_per_row, std::uint64_t seed)
  : s_(s), dim_(dim), state_(state_per_row) {
  tables_.reserve(num_tables);
  for (std::size_t t = 0; t < num_tables; ++t)
    tables_.emplace_back(s, dim, state_per_row, seed, t);
}

template <class Slot>
void dynamic_tables::keys_of(batch_lookup& b, const std::uint64_t* hashes, std::size_t examples,
                             const std::uint32_t* bag_offsets, Slot slot) const {
  b.offsets = bag_offsets;
  const std::size_t T = tables_.size(), fields = examples * T;
  const std::size_t n = bag_offsets ? bag_offsets[fields] : fields;
  b.keys.resize(n);
  // Ids in the batch's order, so admissions (and evictions) happen in the
  // order of the examples.
  for (std::size_t f = 0, t = 0; f < fields; ++f) {
    const std::size_t lo = bag_offsets ? bag_offsets[f] : f;
    const std::size_t hi = bag_offsets ? bag_offsets[f + 1] : f + 1;
    for (std::size_t i = lo; i < hi; ++i)
      b.keys[i] = row_key(t, slot(t, hashes[i]));
    if (++t == T)
      t = 0;
  }
  b.index.build(b.keys.data(), n);
}

void dynamic_tables::gather(batch_lookup& b) const {
  const auto& u = b.index.unique();
  b.unique_rows.resize(u.size() * dim_);
  for (std::size_t i = 0; i < u.size(); ++i) {
    float* out = b.unique_rows.data() + i * dim_;
    const auto s = key_row(u[i]);
    if (s == missing_slot)
      std::fill_n(out, dim_, 0.0f);
    else
      std::memcpy(out, tables_[key_table(u[i])].row(std::uint32_t(s)), dim_ * sizeof(float));
  }
}

void dynamic_tables::train_lookup(batch_lookup& b, const std::uint64_t* hashes,
                                  std::size_t examples, std::uint64_t now,
                                  const std::uint32_t* bag_offsets) {
  for (auto& t : tables_)
    t.expire(now);
  keys_of(b, hashes, examples, bag_offsets,
          [&](std::size_t t, std::uint64_t id) { return tables_[t].train_lookup(id, now); });
  gather(b);
}

void dynamic_tables::find(batch_lookup& b, const std::uint64_t* hashes, std::size_t examples,
                          const std::uint32_t* bag_offsets, std::uint64_t* lookups,
                          std::uint64_t* missing) const {
  std::uint64_t n = 0, m = 0;
  keys_of(b, hashes, examples, bag_offsets, [&](std::size_t t, std::uint64_t id) {
    const auto s = tables_[t].find(id);
    ++n;
    m += s == dynamic_table::no_row;
    return s;
  });
  *lookups += n;
  *missing += m;
  gather(b);
}

void dynamic_tables::apply(const sparse_index& idx, const float* grad_unique,
                           const sparse_optimizer& opt) {
  const auto& u = idx.unique();
  for (std::size_t i = 0; i < u.size(); ++i) {
    const auto s = key_row(u[i]);
    if (s == missing_slot)
      continue;
    auto& t = tables_[key_table(u[i])];
    opt.apply(t.row(std::uint32_t(s)), t.accumulator(std::uint32_t(s)), grad_unique + i * dim_,
              dim_);
  }
}

std::size_t dynamic_tables::bytes() const {
  std::size_t n = 0;
  for (const auto& t : tables_)
    n += t.bytes();
  return n;
}

dynamic_stats dynamic_tables::totals() const {
  dynamic_stats s;
  for (const auto& t : tables_) {
    const auto& x = t.stats();
    s.admissions += x.admissions;
    s.evictions += x.evictions;
    s.expired += x.expired;
    s.lookups += x.lookups;
    s.missing += x.missing;
  }
  return s;
}

} // namespace model
