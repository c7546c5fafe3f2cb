// DCT's hard threshold (model/dct_codec.hpp): the threshold estimate, the
// sparse part of a vector with its residual, and rounding to halves.
#include "model/dct_codec.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "model/check.hpp"
#include "model/half.hpp"

namespace model {

float estimate_threshold(const float* x, std::size_t n, double keep, std::uint64_t seed,
                         std::size_t sample) {
  if (keep >= 1.0 || n == 0)
    return 0.0f;
  SS_CHECK(keep > 0.0, "a keep fraction above 0");
  SS_CHECK(sample > 0, "a sample of at least one entry");
  const std::size_t m = std::min(n, sample);
  const std::size_t stride = n / m;
  const std::size_t offset = stride > 1 ? std::size_t(seed % stride) : 0;
  std::vector<float> s(m);
  for (std::size_t i = 0; i < m; ++i)
    s[i] = std::fabs(x[offset + i * stride]);
  // The (1 - keep) quantile of |x|: about keep x m sampled entries are >= it.
  const std::size_t kept = std::max<std::size_t>(1, std::size_t(std::ceil(keep * double(m))));
  const std::size_t k = m - std::min(m, kept);
  if (kept > 64 || kept * 8 > m) {
    std::nth_element(s.begin(), s.begin() + std::ptrdiff_t(k), s.end());
    return s[k];
  }
  // Few kept (dct.mp's pushes keep 1 %): the kept largest in a min-heap, the
  // k-th smallest being the smallest of them; the same value nth_element
  // gives, with one compare for most entries instead of a partition's
  // passes (nth_element was 3 % of a 2-trainer dct.mp run's samples).
  // The heap is the sample's first `kept` entries, in place.
  const auto top = s.begin(), end = s.begin() + std::ptrdiff_t(kept);
  std::make_heap(top, end, std::greater<>());
  for (std::size_t i = kept; i < m; ++i)
    if (s[i] > *top) {
      std::pop_heap(top, end, std::greater<>());
      *(end - 1) = s[i];
      std::push_heap(top, end, std::greater<>());
    }
  return *top;
}

void threshold(const float* x, std::size_t n, float tau, sparse_vector& out, float* residual) {
  SS_CHECK(n <= 0xFFFFFFFFu, "a vector of at most 2^32 - 1 entries");
  out.size = std::uint32_t(n);
  out.half = false;
  out.log8 = false;
  out.index.clear();
  out.value.clear();
  if (residual)
    std::copy(x, x + n, residual);
  // Branch-free compaction: every entry is written at the next free slot,
  // which advances only when it is sent (a branch per entry mispredicts
  // about as often as the keep fraction). The buffers keep their capacity
  // across calls; resize(n) costs a memset.
  out.index.resize(n);
  out.value.resize(n);
  std::uint32_t* idx = out.index.data();
  float* val = out.value.data();
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    idx[k] = std::uint32_t(i);
    val[k] = v;
    k += std::size_t((v != 0.0f) & (std::fabs(v) >= tau));
  }
  out.index.resize(k);
  out.value.resize(k);
  if (residual)
    for (std::size_t j = 0; j < k; ++j)
      residual[idx[j]] = 0.0f;
}

void scatter_add(const sparse_vector& s, float* dst, float scale) {
  for (std::size_t k = 0; k < s.nnz(); ++k)
    dst[s.index[k]] += scale * s.value[k];
}

void round_to_half(sparse_vector& s, float* residual) {
  for (std::size_t k = 0; k < s.nnz(); ++k) {
    const float v = s.value[k];
    const float h = round_half(v);
    if (residual)
      residual[s.index[k]] += v - h;
    s.value[k] = h;
  }
  s.half = true;
}

} // namespace model
