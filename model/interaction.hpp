#pragma once
// DLRM dot interaction as batched small GEMMs (vectorised over the T+1
// vectors of one example, one broadcast per element: no horizontal sums).
//
// For example e, let T_e = [x_e, e_{e,1} .. e_{e,T}]  ([dim, T+1]) where x_e is
// the bottom-MLP output and e_{e,t} the pooled embedding of table t. The
// interaction output z_e ([dim + P], P = (T+1)T/2) is x_e followed by the
// strictly lower triangle of the Gram matrix T_e^T T_e in row-major order:
// (1,0), (2,0), (2,1), (3,0), ...
#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace model {

// Embedding rows as the interaction reads them: example e's row of table t is
// column index[e*T + t] of `rows` ([dim, num_rows], column-major), or column
// e*T + t when index is null. With the batch's de-duplicated rows and the
// sparse_index's inverse this avoids expanding rows per example, and the
// backward pass sums the gradients of repeated rows as it goes.
//
// Multi-hot batches set offsets ([B*T + 1]): field f = e*T + t is then the
// bag of ids offsets[f] .. offsets[f+1], id i reading column(i). model::dlrm
// pools the bags (model/pooling.hpp) and hands the interaction the pooled
// vectors, one per field (offsets null); the interaction never sees bags.
struct embedding_input {
  const float* rows = nullptr;
  const std::uint32_t* index = nullptr;
  std::size_t num_rows = 0;
  const std::uint32_t* offsets = nullptr;

  const float* column(std::size_t i, std::size_t dim) const {
    return rows + (index ? std::size_t{index[i]} : i) * dim;
  }
};

// np below is T+1 rounded up to the float packet width of the build.
struct interaction_scratch {
  Eigen::MatrixXf tcat; // [np * dim, B]: each example's T_e^T ([np, dim], padding rows 0)
  Eigen::MatrixXf gram; // [np, T+1]: one example's Gram matrix (lower triangle used)
  std::vector<Eigen::Index> offsets; // [T+1]: where pair (i, 0) sits in the output gradient
  Eigen::MatrixXf tv;   // [dp, T+1]: one example's T_e (dp: dim rounded up to the packet width)
  Eigen::MatrixXf dt;   // [dp, T+1]: one example's dL/dT_e
};

// bottom: [dim, B]; z: resized to [dim + P, B].
void interaction_forward(const Eigen::MatrixXf& bottom, const embedding_input& emb,
                         std::size_t num_tables, interaction_scratch& s, Eigen::MatrixXf& z);

// dz: [dim + P, B]. Writes d_bottom [dim, B] and the row gradients d_rows
// ([dim, emb.num_rows]: the sum over every use of a row; zero for rows no
// example uses). Uses s.tcat from the matching forward call.
void interaction_backward(const Eigen::MatrixXf& dz, const embedding_input& emb,
                          std::size_t num_tables, interaction_scratch& s,
                          Eigen::MatrixXf& d_bottom, float* d_rows);

} // namespace model
