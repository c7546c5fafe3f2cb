#include "model/cross.hpp"
#include "model/mlp.hpp"

#include <algorithm>
#include <cstring>

#include "model/check.hpp"

namespace model {

using Eigen::Index;

namespace {

using const_map = Eigen::Map<const Eigen::MatrixXf>;
using map = Eigen::Map<Eigen::MatrixXf>;

const_map v_of(const float* buf, const cross_slot& s) {
  return const_map(buf + s.v, Index(s.rank), Index(s.width));
}
const_map u_of(const float* buf, const cross_slot& s) {
  return const_map(buf + s.u, Index(s.width), Index(s.rank));
}

} // namespace

void cross_forward(const float* params, const std::vector<cross_slot>& layers,
                   const Eigen::MatrixXf& bottom, const embedding_input& emb,
                   std::size_t num_tables, cross_scratch& s, Eigen::MatrixXf& out) {
  const Index dim = bottom.rows(), batch = bottom.cols();
  const Index width = dim * Index(num_tables + 1);
  s.x.resize(layers.size() + 1);
  s.h.resize(layers.size());
  s.g.resize(layers.size());
  auto& x0 = s.x[0];
  x0.resize(width, batch);
  for (Index e = 0; e < batch; ++e) {
    float* col = x0.col(e).data();
    std::memcpy(col, bottom.col(e).data(), sizeof(float) * std::size_t(dim));
    for (std::size_t t = 0; t < num_tables; ++t)
      std::memcpy(col + dim * Index(t + 1), emb.column(std::size_t(e) * num_tables + t, std::size_t(dim)),
                  sizeof(float) * std::size_t(dim));
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& c = layers[l];
    SS_CHECK(Index(c.width) == width, "cross: layer width = (tables + 1) * dim");
    s.h[l].resize(Index(c.rank), batch);
    s.h[l].noalias() = v_of(params, c) * s.x[l];
    auto& g = s.g[l];
    g.resize(width, batch);
    g.colwise() = Eigen::Map<const Eigen::VectorXf>(params + c.b, width);
    g.noalias() += u_of(params, c) * s.h[l];
    s.x[l + 1] = x0.cwiseProduct(g) + s.x[l];
  }
  // The backward pass reads x_0 .. x_{L-1}, never x_L: hand x_L over
  // instead of copying it (the buffers trade places and stay allocated).
  if (layers.empty())
    out = x0;
  else
    std::swap(out, s.x.back());
}

void cross_backward(const float* params, const std::vector<cross_slot>& layers,
                    const Eigen::MatrixXf& d_out, const embedding_input& emb,
                    std::size_t num_tables, cross_scratch& s, float* grads,
                    Eigen::MatrixXf& d_bottom, float* d_rows) {
  const Index width = d_out.rows(), batch = d_out.cols();
  const Index dim = width / Index(num_tables + 1);
  const auto& x0 = s.x[0];
  s.dx = d_out;          // dL/dx_{l+1}, then dL/dx_l
  s.dx0.setZero(width, batch); // the x0 .* g_l terms' share of dL/dx0
  for (std::size_t l = layers.size(); l-- > 0;) {
    const auto& c = layers[l];
    s.dg = s.dx.cwiseProduct(x0);
    s.dx0.noalias() += s.dx.cwiseProduct(s.g[l]);
    map(grads + c.u, width, Index(c.rank)).noalias() = s.dg * s.h[l].transpose();
    sum_columns(s.dg, grads + c.b);
    s.dh.resize(Index(c.rank), batch);
    s.dh.noalias() = u_of(params, c).transpose() * s.dg;
    map(grads + c.v, Index(c.rank), width).noalias() = s.dh * s.x[l].transpose();
    s.dx.noalias() += v_of(params, c).transpose() * s.dh;
  }
  s.dx0 += s.dx; // x_0 = x0: the identity path
  d_bottom = s.dx0.topRows(dim);
  std::fill(d_rows, d_rows + std::size_t(dim) * emb.num_rows, 0.0f);
  for (Index e = 0; e < batch; ++e) {
    const float* col = s.dx0.col(e).data();
    for (std::size_t t = 0; t < num_tables; ++t) {
      const std::size_t i = std::size_t(e) * num_tables + t;
      float* row = d_rows + (emb.index ? std::size_t{emb.index[i]} : i) * std::size_t(dim);
      const float* src = col + dim * Index(t + 1);
      for (Index k = 0; k < dim; ++k)
        row[k] += src[k];
    }
  }
}

} // namespace model
