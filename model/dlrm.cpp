#include "model/dlrm.hpp"

#include <cstring>

#include "model/metrics.hpp"
#include "model/mlp.hpp"
#include "model/pooling.hpp"

namespace model {

using Eigen::Index;

dlrm::dlrm(const arch& a) : arch_(a), layout_(a) {}

embedding_input dlrm::pooled_input(const embedding_input& emb, std::size_t batch,
                                   workspace& ws) const {
  if (!emb.offsets)
    return emb;
  const std::size_t fields = batch * arch_.num_tables;
  ws.pooled.resize(fields * arch_.dim);
  pool_forward(emb, fields, arch_.dim, arch_.pooling, ws.pooled.data());
  return {ws.pooled.data(), nullptr, fields};
}

void dlrm::forward(const float* params, const float* dense, const embedding_input& bags,
                   std::size_t batch, workspace& ws) const {
  const embedding_input emb = pooled_input(bags, batch, ws);
  const Index b = static_cast<Index>(batch);
  ws.bottom_acts.resize(layout_.bottom().size() + 1);
  ws.top_acts.resize(layout_.top().size() + 1);
  // The example-major dense block is exactly a column-major [num_dense, B].
  ws.bottom_acts[0] = Eigen::Map<const Eigen::MatrixXf>(dense, Index(arch_.num_dense), b);
  mlp_forward(params, layout_.bottom(), true, ws.bottom_acts);
  if (arch_.interaction == interaction_kind::dcn)
    cross_forward(params, layout_.cross(), ws.bottom_acts.back(), emb, arch_.num_tables, ws.cross,
                  ws.top_acts[0]);
  else
    interaction_forward(ws.bottom_acts.back(), emb, arch_.num_tables, ws.inter, ws.top_acts[0]);
  mlp_forward(params, layout_.top(), false, ws.top_acts);
  ws.logits = ws.top_acts.back().row(0).transpose();
}

void dlrm::forward_backward(const float* params, const float* dense, const embedding_input& bags,
                            const float* labels, std::size_t batch, workspace& ws,
                            float* grad_params, float* grad_rows) const {
  forward(params, dense, bags, batch, ws);
  // Multi-hot: the interaction reads (and differentiates) the pooled vectors
  // of this forward; their gradient goes back to the rows below.
  const embedding_input emb =
    bags.offsets ? embedding_input{ws.pooled.data(), nullptr, batch * arch_.num_tables} : bags;
  if (bags.offsets)
    ws.d_pooled.resize(ws.pooled.size());
  float* d_emb = bags.offsets ? ws.d_pooled.data() : grad_rows;
  const Index b = static_cast<Index>(batch);
  ws.d_top.resize(1, b);
  const float inv_b = 1.0f / static_cast<float>(batch);
  double loss = 0.0;
  for (Index e = 0; e < b; ++e) {
    const float z = ws.logits[e];
    loss += bce_with_logit(z, labels[e]);
    ws.d_top(0, e) = (static_cast<float>(sigmoid(z)) - labels[e]) * inv_b;
  }
  ws.loss_sum = loss;
  mlp_backward(params, layout_.top(), false, ws.top_acts, ws.d_top, grad_params, &ws.d_top_in,
               ws.scratch);
  if (arch_.interaction == interaction_kind::dcn)
    cross_backward(params, layout_.cross(), ws.d_top_in, emb, arch_.num_tables, ws.cross,
                   grad_params, ws.d_bottom, d_emb);
  else
    interaction_backward(ws.d_top_in, emb, arch_.num_tables, ws.inter, ws.d_bottom, d_emb);
  if (bags.offsets)
    pool_backward(bags, batch * arch_.num_tables, arch_.dim, arch_.pooling, ws.d_pooled.data(),
                  grad_rows);
  mlp_backward(params, layout_.bottom(), true, ws.bottom_acts, ws.d_bottom, grad_params, nullptr,
               ws.scratch);
}

double dlrm::flops_per_example() const {
  const double n = double(arch_.num_tables + 1);
  const double inter_macs = arch_.interaction == interaction_kind::dcn
                              ? double(layout_.cross_macs())
                              : n * n * double(arch_.dim); // Gram matrix per example
  return 3.0 * 2.0 * (double(layout_.mlp_macs()) + inter_macs);
}

} // namespace model
