#include "actors/hogwild_rows.hpp"

#include "model/embedding.hpp"

namespace actors {

void hogwild_rows::gather(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
                          float* out) const {
  tables_->gather(keys, at, n, num_shards_, out);
}

void hogwild_rows::apply(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
                         const float* grads) {
  tables_->apply(keys, at, n, num_shards_, grads, opt_);
}

} // namespace actors
