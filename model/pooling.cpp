#include "model/pooling.hpp"

#include <algorithm>

namespace model {

void pool_forward(const embedding_input& emb, std::size_t fields, std::size_t dim,
                  pooling_kind kind, float* pooled) {
  for (std::size_t f = 0; f < fields; ++f) {
    float* out = pooled + f * dim;
    std::fill(out, out + dim, 0.0f);
    const std::size_t first = emb.offsets[f], last = emb.offsets[f + 1];
    for (std::size_t i = first; i < last; ++i) {
      const float* row = emb.column(i, dim);
      for (std::size_t k = 0; k < dim; ++k)
        out[k] += row[k];
    }
    if (kind == pooling_kind::mean && last - first > 1) {
      const float w = 1.0f / static_cast<float>(last - first);
      for (std::size_t k = 0; k < dim; ++k)
        out[k] *= w;
    }
  }
}

void pool_backward(const embedding_input& emb, std::size_t fields, std::size_t dim,
                   pooling_kind kind, const float* d_pooled, float* d_rows) {
  std::fill(d_rows, d_rows + dim * emb.num_rows, 0.0f);
  for (std::size_t f = 0; f < fields; ++f) {
    const std::size_t first = emb.offsets[f], last = emb.offsets[f + 1];
    if (first == last)
      continue;
    const float w = kind == pooling_kind::mean ? 1.0f / static_cast<float>(last - first) : 1.0f;
    const float* g = d_pooled + f * dim;
    for (std::size_t i = first; i < last; ++i) {
      float* d = d_rows + (emb.index ? std::size_t{emb.index[i]} : i) * dim;
      for (std::size_t k = 0; k < dim; ++k)
        d[k] += w * g[k];
    }
  }
}

} // namespace model
