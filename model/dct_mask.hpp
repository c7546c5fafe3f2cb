#pragma once
// Which entries DCT's hard threshold sends, tested a vector register at a
// time: the shared inner step of dct_layer_thresholds::apply (dense sync)
// and dct_row_thresholds::encode (embedding rows and gradients).
#include <cmath>
#include <cstddef>

#if defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

namespace model::dct_mask {

// Whether v is sent at threshold tau (0 never is; nor is NaN).
inline bool sends(float v, float tau) { return (v != 0.0f) & (std::fabs(v) >= tau); }

// The sends() test of `lanes` entries at once, as a bit mask (bit k: x[k]).
// Ordered compares, so NaN fails both, as in sends().
#if defined(__AVX__)
constexpr std::size_t lanes = 8;
inline unsigned sent_mask(const float* x, float tau) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_loadu_ps(x)); // |x|
  const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(a, _mm256_set1_ps(tau), _CMP_GE_OQ),
                                  _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_NEQ_OQ));
  return unsigned(_mm256_movemask_ps(ok));
}
#elif defined(__SSE2__)
constexpr std::size_t lanes = 4;
inline unsigned sent_mask(const float* x, float tau) {
  const __m128 a = _mm_andnot_ps(_mm_set1_ps(-0.0f), _mm_loadu_ps(x));
  const __m128 ok = _mm_and_ps(_mm_cmpge_ps(a, _mm_set1_ps(tau)), // ordered: NaN fails
                               _mm_cmpneq_ps(a, _mm_setzero_ps()));
  return unsigned(_mm_movemask_ps(ok));
}
#else
constexpr std::size_t lanes = 1;
inline unsigned sent_mask(const float* x, float tau) { return sends(*x, tau) ? 1u : 0u; }
#endif

// Appends (first + k, x[k]) for each k in [0, n) that sends() passes, in
// order: `lanes` entries tested at once and only the set bits of the mask
// visited. At the keeps used a few per cent of the entries pass, so this
// runs near the speed of reading x.
template <class Index, class Value>
void append_sent(const float* x, std::size_t n, float tau, std::size_t first, Index& index,
                 Value& value) {
  std::size_t j = 0;
  for (; j + lanes <= n; j += lanes)
    for (unsigned m = sent_mask(x + j, tau); m != 0; m &= m - 1) {
      const std::size_t k = j + std::size_t(__builtin_ctz(m));
      index.push_back(static_cast<typename Index::value_type>(first + k));
      value.push_back(x[k]);
    }
  for (; j < n; ++j)
    if (sends(x[j], tau)) {
      index.push_back(static_cast<typename Index::value_type>(first + j));
      value.push_back(x[j]);
    }
}

} // namespace model::dct_mask
