#include "model/interaction.hpp"

#include <cstring>

namespace model {

using Eigen::Index;

void interaction_forward(const Eigen::MatrixXf& bottom, const embedding_input& emb,
                         std::size_t num_tables, interaction_scratch& s, Eigen::MatrixXf& z) {
  const Index d = bottom.rows();
  const Index b = bottom.cols();
  const Index n = static_cast<Index>(num_tables) + 1;
  s.tcat.resize(d, n * b);
  s.gram.resize(n, n);
  z.resize(d + n * (n - 1) / 2, b);
  for (Index e = 0; e < b; ++e) {
    float* blk = s.tcat.data() + e * n * d;
    std::memcpy(blk, bottom.data() + e * d, sizeof(float) * d);
    for (Index t = 1; t < n; ++t)
      std::memcpy(blk + t * d, emb.column(std::size_t(e * (n - 1) + t - 1), std::size_t(d)),
                  sizeof(float) * d);
    Eigen::Map<const Eigen::MatrixXf> t(blk, d, n);
    // Tiny product ([n, d] x [d, n]): coefficient-based beats blocked GEMM.
    s.gram.noalias() = t.transpose().lazyProduct(t); // [n, n]
    float* out = z.data() + e * z.rows();
    std::memcpy(out, blk, sizeof(float) * d);
    Index k = d;
    for (Index i = 1; i < n; ++i)
      for (Index j = 0; j < i; ++j)
        out[k++] = s.gram(i, j);
  }
}

void interaction_backward(const Eigen::MatrixXf& dz, const embedding_input& emb,
                          std::size_t num_tables, interaction_scratch& s,
                          Eigen::MatrixXf& d_bottom, float* d_rows) {
  const Index n = static_cast<Index>(num_tables) + 1;
  const Index d = s.tcat.rows();
  const Index b = dz.cols();
  d_bottom.resize(d, b);
  std::memset(d_rows, 0, sizeof(float) * std::size_t(d) * emb.num_rows);
  s.sym.setZero(n, n);
  s.dt.resize(d, n);
  for (Index e = 0; e < b; ++e) {
    const float* g = dz.data() + e * dz.rows();
    // G_ij = t_i . t_j for i > j, so dL/dT = T (S + S^T) with S the strictly
    // lower triangle of dL/dG; sym holds S + S^T (zero diagonal).
    Index k = d;
    for (Index i = 1; i < n; ++i)
      for (Index j = 0; j < i; ++j) {
        s.sym(i, j) = g[k];
        s.sym(j, i) = g[k];
        ++k;
      }
    Eigen::Map<const Eigen::MatrixXf> t(s.tcat.data() + e * n * d, d, n);
    s.dt.noalias() = t.lazyProduct(s.sym); // [d, n]
    for (Index r = 0; r < d; ++r)
      d_bottom(r, e) = g[r] + s.dt(r, 0);
    for (Index c = 1; c < n; ++c) {
      const std::size_t i = std::size_t(e * (n - 1) + c - 1);
      float* dst = d_rows + (emb.index ? std::size_t{emb.index[i]} : i) * std::size_t(d);
      const float* src = s.dt.data() + c * d;
      for (Index r = 0; r < d; ++r)
        dst[r] += src[r];
    }
  }
}

} // namespace model
