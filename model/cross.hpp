#pragma once
// DCNv2's interaction: a stack of low-rank cross layers over the
// concatenation of the bottom-MLP output and the pooled embeddings (Wang et
// al., "DCN V2", WWW'21; MLPerf's DLRM-DCNv2).
//
// For example e, x0 = [x_e; e_{e,1}; ..; e_{e,T}] ([D], D = (T+1) dim), and
// layer l (rank r) computes
//   h_l     = V_l x_l                 V_l [r, D]
//   g_l     = U_l h_l + b_l           U_l [D, r], b_l [D]
//   x_{l+1} = x0 .* g_l + x_l
// The top MLP reads x_L ([D]); with no layer it reads x0 itself.
// Batched: every matrix below is [rows, B], one column per example.
#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "model/dense_layout.hpp"
#include "model/interaction.hpp"

namespace model {

struct cross_scratch {
  // [L+1] of [D, B]: x[0] = x0, x[l+1] = layer l's output; after forward,
  // x[L] holds no meaning (x_L went to `out`).
  std::vector<Eigen::MatrixXf> x;
  std::vector<Eigen::MatrixXf> h; // [L] of [r, B]
  std::vector<Eigen::MatrixXf> g; // [L] of [D, B]
  Eigen::MatrixXf dx, dx0, dg, dh;
};

// bottom: [dim, B]. out: x_L, [D, B] (moved out of the scratch, not copied).
void cross_forward(const float* params, const std::vector<cross_slot>& layers,
                   const Eigen::MatrixXf& bottom, const embedding_input& emb,
                   std::size_t num_tables, cross_scratch& s, Eigen::MatrixXf& out);

// d_out: [D, B], the gradient w.r.t. x_L. Overwrites the cross layers' slots
// of grads (flat layout), writes d_bottom [dim, B] and the row gradients
// d_rows ([dim, emb.num_rows], zeroed first, then summed over every use of a
// row). Uses s from the matching forward call.
void cross_backward(const float* params, const std::vector<cross_slot>& layers,
                    const Eigen::MatrixXf& d_out, const embedding_input& emb,
                    std::size_t num_tables, cross_scratch& s, float* grads,
                    Eigen::MatrixXf& d_bottom, float* d_rows);

} // namespace model
