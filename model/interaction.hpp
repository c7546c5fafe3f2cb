#pragma once
// DLRM dot interaction as batched small GEMMs.
//
// For example e, let T_e = [x_e, e_{e,1} .. e_{e,T}]  ([dim, T+1]) where x_e is
// the bottom-MLP output and e_{e,t} the pooled embedding of table t. The
// interaction output z_e ([dim + P], P = (T+1)T/2) is x_e followed by the
// strictly lower triangle of the Gram matrix T_e^T T_e in row-major order:
// (1,0), (2,0), (2,1), (3,0), ...
#include <cstddef>

#include <Eigen/Core>

namespace model {

struct interaction_scratch {
  Eigen::MatrixXf tcat; // [dim, (T+1)*B]: the T_e blocks side by side
  Eigen::MatrixXf gram; // [T+1, T+1]
  Eigen::MatrixXf sym;  // [T+1, T+1]
  Eigen::MatrixXf dt;   // [dim, T+1]
};

// bottom: [dim, B]; emb: dim*B*T floats, column (e*T + t) is table t of example e
// (column-major [dim, B*T]); z: resized to [dim + P, B].
void interaction_forward(const Eigen::MatrixXf& bottom, const float* emb, std::size_t num_tables,
                         interaction_scratch& s, Eigen::MatrixXf& z);

// dz: [dim + P, B]. Writes d_bottom [dim, B] and d_emb (same layout as emb).
// Uses s.tcat from the matching forward call.
void interaction_backward(const Eigen::MatrixXf& dz, std::size_t num_tables,
                          interaction_scratch& s, Eigen::MatrixXf& d_bottom, float* d_emb);

} // namespace model
