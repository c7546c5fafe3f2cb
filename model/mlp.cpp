#include "model/mlp.hpp"
#include "model/check.hpp"

#include <algorithm>

namespace model {

void sum_columns(const Eigen::MatrixXf& m, float* out) {
  // Grown to the widest layer once, then reused (no allocation per layer).
  thread_local float_buffer buf; // aligned to EIGEN_MAX_ALIGN_BYTES (64)
  const auto rows = std::size_t(m.rows());
  if (buf.size() < rows)
    buf.resize(rows);
  Eigen::Map<Eigen::VectorXf, Eigen::Aligned64> sum(buf.data(), m.rows());
  sum.noalias() = m.rowwise().sum();
  std::copy(buf.data(), buf.data() + rows, out);
}

void mlp_forward(const float* params, const std::vector<layer_slot>& layers, bool relu_last,
                 std::vector<Eigen::MatrixXf>& acts) {
  SS_CHECK(acts.size() == layers.size() + 1, "mlp: one activation per layer plus the input");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& s = layers[l];
    SS_CHECK(static_cast<std::size_t>(acts[l].rows()) == s.in, "mlp: activation rows match the layer input");
    auto& y = acts[l + 1];
    y.resize(static_cast<Eigen::Index>(s.out), acts[l].cols());
    // The bias first, then the product added to it: one pass over y fewer
    // than zeroing y (Eigen's `=`), multiplying, then adding the bias.
    y.colwise() = bias(params, s);
    y.noalias() += weights(params, s) * acts[l];
    if (relu_last || l + 1 < layers.size())
      y = y.cwiseMax(0.0f);
  }
}

void mlp_backward(const float* params, const std::vector<layer_slot>& layers, bool relu_last,
                  const std::vector<Eigen::MatrixXf>& acts, Eigen::MatrixXf& d_out, float* grads,
                  Eigen::MatrixXf* d_in, Eigen::MatrixXf& scratch) {
  Eigen::MatrixXf* d = &d_out;
  for (std::size_t l = layers.size(); l-- > 0;) {
    const auto& s = layers[l];
    const auto& y = acts[l + 1];
    if (relu_last || l + 1 < layers.size())
      *d = (y.array() > 0.0f).select(d->array(), 0.0f); // ReLU mask on the output
    weights(grads, s).noalias() = (*d) * acts[l].transpose();
    sum_columns(*d, grads + s.b);
    if (l == 0 && d_in == nullptr)
      break;
    Eigen::MatrixXf& next = (l == 0) ? *d_in : (d == &d_out ? scratch : d_out);
    next.resize(static_cast<Eigen::Index>(s.in), d->cols());
    next.noalias() = weights(params, s).transpose() * (*d);
    d = &next;
  }
  if (d_in != nullptr && d != d_in)
    *d_in = *d;
}

} // namespace model
