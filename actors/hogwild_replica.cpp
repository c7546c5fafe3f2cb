#include "actors/hogwild_replica.hpp"

#include <cstring>

namespace actors {

// Out of line and not inlined, so these frames appear in ThreadSanitizer
// reports and the suppression `race:actors::hogwild_replica::` matches them.

__attribute__((noinline)) void hogwild_replica::copy_out(std::size_t offset, std::size_t n,
                                                         float* dst) const {
  std::memcpy(dst, params_.get() + offset, n * sizeof(float));
}

__attribute__((noinline)) void hogwild_replica::apply_dense(const model::dense_optimizer& opt,
                                                            const float* grads) {
  opt.apply(params_.get(), acc_.get(), grads, size_);
}

__attribute__((noinline)) void hogwild_replica::subtract(std::size_t offset, const float* d,
                                                         std::size_t n) {
  float* w = params_.get() + offset;
  for (std::size_t j = 0; j < n; ++j)
    w[j] -= d[j];
}

__attribute__((noinline)) void hogwild_replica::subtract_sparse(std::size_t offset,
                                                                const model::sparse_vector& d) {
  SS_CHECK(offset + d.size <= size_, "a sparse range within the replica");
  float* w = params_.get() + offset;
  for (std::size_t k = 0; k < d.nnz(); ++k)
    w[d.index[k]] -= d.value[k];
}

__attribute__((noinline)) void hogwild_replica::merge(model::merge_mode mode,
                                                      const float* snapshot, const float* target) {
  model::merge(mode, params_.get(), snapshot, target, size_);
}

} // namespace actors
