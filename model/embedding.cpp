#include "model/embedding.hpp"

#include <cmath>
#include <cstring>
#include <random>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace model {

void make_keys(const std::uint64_t* hashes, std::size_t n_ids, std::size_t num_tables,
               std::uint64_t rows_per_table, std::uint64_t* keys) {
  // A 64-bit division per id was 1.1 % of the small model's engine cycles.
  const remainder_by row_of(rows_per_table);
  std::size_t t = 0;
  for (std::size_t i = 0; i < n_ids; ++i) {
    keys[i] = row_key(t, row_of(hashes[i]));
    if (++t == num_tables)
      t = 0;
  }
}

void make_bag_keys(const std::uint64_t* hashes, const std::uint32_t* offsets, std::size_t fields,
                   std::size_t num_tables, std::uint64_t rows_per_table, std::uint64_t* keys) {
  const remainder_by row_of(rows_per_table);
  std::size_t t = 0;
  for (std::size_t f = 0; f < fields; ++f) {
    for (std::size_t i = offsets[f]; i < offsets[f + 1]; ++i)
      keys[i] = row_key(t, row_of(hashes[i]));
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
                          const embedding_tables& t, const std::uint32_t* bag_offsets) {
  offsets = bag_offsets;
  const std::size_t fields = examples * a.num_tables;
  const std::size_t n = bag_offsets ? bag_offsets[fields] : fields;
  keys.resize(n);
  if (bag_offsets)
    make_bag_keys(hashes, bag_offsets, fields, a.num_tables, a.rows_per_table, keys.data());
  else
    make_keys(hashes, n, a.num_tables, a.rows_per_table, keys.data());
  index.build(keys.data(), n);
  unique_rows.resize(index.unique().size() * a.dim);
  t.gather(index, unique_rows.data());
}

namespace {

// n zeroed floats, on transparent huge pages where the kernel gives them.
// Each batch reads and writes thousands of rows scattered over tables of
// hundreds of MiB: with 4 KiB pages nearly every row is a TLB miss and a
// page walk. The whole 2 MiB pages inside the buffer are marked before its
// first touch (the zeroing), so the faults that zero them map huge pages.
// Only where memory lives changes, not a value.
std::vector<float> zeroed_table(std::size_t n) {
  std::vector<float> v;
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto first = (reinterpret_cast<std::uintptr_t>(v.data()) + huge - 1) & ~(huge - 1);
  const auto last = reinterpret_cast<std::uintptr_t>(v.data() + n) & ~(huge - 1);
  if (last > first) // advice only: without THP the pages stay small
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
  v.resize(n, 0.0f);
  return v;
}

} // namespace

embedding_tables::embedding_tables(std::size_t num_tables, std::uint64_t rows_per_table,
                                   std::size_t dim, std::size_t state_per_row)
  : num_tables_(num_tables), rows_(rows_per_table), dim_(dim), state_(state_per_row),
    weights_(zeroed_table(num_tables * rows_per_table * dim)),
    accum_(zeroed_table(num_tables * rows_per_table * state_per_row)) {}

void embedding_tables::init(std::uint64_t seed, float bound) {
  std::mt19937_64 rng(seed);
  if (bound <= 0.0f)
    bound = std::sqrt(1.0f / static_cast<float>(rows_));
  std::uniform_real_distribution<float> u(-bound, bound);
  for (auto& w : weights_)
    w = u(rng);
  std::fill(accum_.begin(), accum_.end(), 0.0f);
}

namespace {

// Rows are scattered over a table far larger than the caches, so each row
// (and, when written, its accumulator) is fetched a few entries ahead of its
// use. entry(i) gives entry i's local key and the position j of its data.
// 24 entries: the small model's engine ran 1.056x (0.913-1.136, 7 pairs) the
// speed it had with 8, and 40 was 0.973x of 24.
constexpr std::size_t prefetch_distance = 24;

struct entry_at {
  std::uint64_t key;
  std::size_t j;
};

// One row, inline: a call to memcpy per 64-byte row was 2 % of the small
// model's cycles.
inline void copy_row(float* dst, const float* src, std::size_t dim) {
  using packet = Eigen::internal::packet_traits<float>::type;
  constexpr std::size_t lanes = Eigen::internal::packet_traits<float>::size;
  std::size_t k = 0;
  for (; k + lanes <= dim; k += lanes)
    Eigen::internal::pstoreu(dst + k, Eigen::internal::ploadu<packet>(src + k));
  for (; k < dim; ++k)
    dst[k] = src[k];
}

template <class Entry>
void gather_rows(const embedding_tables& t, std::size_t n, Entry entry, float* out) {
  const std::size_t dim = t.dim();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + prefetch_distance < n)
      __builtin_prefetch(t.row(entry(i + prefetch_distance).key));
    const auto e = entry(i);
    copy_row(out + e.j * dim, t.row(e.key), dim);
  }
}

template <class Entry>
void apply_rows(embedding_tables& t, std::size_t n, Entry entry, const float* grads,
                const sparse_optimizer& opt) {
  const std::size_t dim = t.dim();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + prefetch_distance < n) {
      const auto ahead = entry(i + prefetch_distance).key;
      __builtin_prefetch(t.row(ahead), 1);
      if (t.state_per_row())
        __builtin_prefetch(t.accumulator(ahead), 1);
    }
    const auto e = entry(i);
    opt.apply(t.row(e.key), t.accumulator(e.key), grads + e.j * dim, dim);
  }
}

// Entry i of a sharded call: its position and the local key of its global key.
struct sharded {
  const std::uint64_t* keys;
  const std::uint32_t* at;
  std::uint32_t num_shards;
  entry_at operator()(std::size_t i) const {
    const std::size_t j = at ? at[i] : i;
    return {shard_local_key(keys[j], num_shards), j};
  }
};

} // namespace

void embedding_tables::gather(const sparse_index& idx, float* unique_rows) const {
  const auto* u = idx.unique().data();
  gather_rows(*this, idx.unique().size(), [u](std::size_t i) { return entry_at{u[i], i}; },
              unique_rows);
}

void embedding_tables::apply(const sparse_index& idx, const float* grad_unique,
                             const sparse_optimizer& opt) {
  const auto* u = idx.unique().data();
  apply_rows(*this, idx.unique().size(), [u](std::size_t i) { return entry_at{u[i], i}; },
             grad_unique, opt);
}

void embedding_tables::gather(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
                              std::uint32_t num_shards, float* out) const {
  gather_rows(*this, n, sharded{keys, at, num_shards}, out);
}

void embedding_tables::apply(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
                             std::uint32_t num_shards, const float* grads,
                             const sparse_optimizer& opt) {
  apply_rows(*this, n, sharded{keys, at, num_shards}, grads, opt);
}

} // namespace model
