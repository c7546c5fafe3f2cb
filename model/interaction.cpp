#include "model/interaction.hpp"

#include <cstring>

namespace model {

using Eigen::Index;

void interaction_forward(const Eigen::MatrixXf& bottom, const float* emb, std::size_t num_tables,
                         interaction_scratch& s, Eigen::MatrixXf& z) {
  const Index d = bottom.rows();
  const Index b = bottom.cols();
  const Index n = static_cast<Index>(num_tables) + 1;
  s.tcat.resize(d, n * b);
  s.gram.resize(n, n);
  z.resize(d + n * (n - 1) / 2, b);
  for (Index e = 0; e < b; ++e) {
    float* blk = s.tcat.data() + e * n * d;
    std::memcpy(blk, bottom.data() + e * d, sizeof(float) * d);
    std::memcpy(blk + d, emb + e * (n - 1) * d, sizeof(float) * d * (n - 1));
    Eigen::Map<const Eigen::MatrixXf> t(blk, d, n);
    s.gram.noalias() = t.transpose() * t; // [n, n]
    float* out = z.data() + e * z.rows();
    std::memcpy(out, blk, sizeof(float) * d);
    Index k = d;
    for (Index i = 1; i < n; ++i)
      for (Index j = 0; j < i; ++j)
        out[k++] = s.gram(i, j);
  }
}

void interaction_backward(const Eigen::MatrixXf& dz, std::size_t num_tables,
                          interaction_scratch& s, Eigen::MatrixXf& d_bottom, float* d_emb) {
  const Index n = static_cast<Index>(num_tables) + 1;
  const Index d = s.tcat.rows();
  const Index b = dz.cols();
  d_bottom.resize(d, b);
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
    s.dt.noalias() = t * s.sym; // [d, n]
    for (Index r = 0; r < d; ++r)
      d_bottom(r, e) = g[r] + s.dt(r, 0);
    std::memcpy(d_emb + e * (n - 1) * d, s.dt.data() + d, sizeof(float) * d * (n - 1));
  }
}

} // namespace model
