#include "model/gemm_blocking.hpp"

#include <Eigen/Core>

namespace model {

void pin_gemm_blocking() {
  (void)aligned_heap_installed();
  Eigen::setCpuCacheSizes(pinned_l1_bytes, pinned_l2_bytes, pinned_l3_bytes);
}

} // namespace model
