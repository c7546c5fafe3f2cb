#include "actors/hogwild_rows.hpp"

#include <cstring>

#include "model/embedding.hpp"

namespace actors {

namespace {

// Rows are scattered over tables far larger than the caches: fetch a few
// ahead (as the shard's copy_rows does).
constexpr std::size_t prefetch_distance = 8;

} // namespace

std::uint64_t hogwild_rows::local_key(std::uint64_t key) const {
  return model::row_key(model::key_table(key), model::key_row(key) / num_shards_);
}

void hogwild_rows::gather(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
                          float* out) const {
  const auto& t = *tables_;
  const std::size_t dim = t.dim();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + prefetch_distance < n)
      __builtin_prefetch(t.row(local_key(keys[at ? at[i + prefetch_distance] : i + prefetch_distance])));
    const std::size_t j = at ? at[i] : i;
    std::memcpy(out + j * dim, t.row(local_key(keys[j])), sizeof(float) * dim);
  }
}

void hogwild_rows::apply(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
                         const float* grads) {
  auto& t = *tables_;
  const std::size_t dim = t.dim();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + prefetch_distance < n)
      __builtin_prefetch(t.row(local_key(keys[at ? at[i + prefetch_distance] : i + prefetch_distance])), 1);
    const std::size_t j = at ? at[i] : i;
    const auto local = local_key(keys[j]);
    opt_.apply(t.row(local), t.accumulator(local), grads + j * dim, dim);
  }
}

} // namespace actors
