#pragma once
// A stack of fully connected layers over whole batches (one Eigen GEMM per
// layer and direction). Activations are column-major [features, batch]: one
// column per example.
#include <vector>

#include <Eigen/Core>

#include "model/dense_layout.hpp"

namespace model {

// out[0, m.rows()) = the sum of m's columns (a layer's bias gradient), with
// the same bits wherever `out` sits: summed into a 64-byte aligned buffer of
// the calling thread, then copied. (Eigen's rowwise().sum() straight into a
// Map peels elements up to the destination's vector boundary, and those add
// the columns in another order than the vector lanes do.)
void sum_columns(const Eigen::MatrixXf& m, float* out);

// acts[0] must hold the input [in, B]. On return acts[l+1] = act(W_l acts[l] + b_l),
// where act is ReLU for every layer except the last when relu_last is false.
void mlp_forward(const float* params, const std::vector<layer_slot>& layers, bool relu_last,
                 std::vector<Eigen::MatrixXf>& acts);

// Backward through the same stack. `d_out` [out, B] is the gradient w.r.t. the
// final (post-activation) output and is consumed (overwritten). Writes the
// parameter gradients into grads (flat layout, overwriting each layer's slots)
// and, if d_in is non-null, the gradient w.r.t. acts[0] into *d_in [in, B].
// `scratch` is reused between calls.
void mlp_backward(const float* params, const std::vector<layer_slot>& layers, bool relu_last,
                  const std::vector<Eigen::MatrixXf>& acts, Eigen::MatrixXf& d_out, float* grads,
                  Eigen::MatrixXf* d_in, Eigen::MatrixXf& scratch);

} // namespace model
