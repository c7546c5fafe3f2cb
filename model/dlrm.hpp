#pragma once
// The DLRM-style model's dense computation over one batch: bottom MLP, dot
// interaction or DCNv2's cross layers (arch::interaction), top MLP,
// BCE-with-logits loss. Embedding rows come in already
// looked up (from local tables or from shard actors), so the same code serves
// the sequential engine and the Hogwild workers.
//
// Inputs per batch of B examples:
//   dense  [B * num_dense]  example-major, already transformed
//   emb    embedding rows and which row each (example, table) uses
//          (interaction.hpp: embedding_input), or which rows each field's
//          bag pools (emb.offsets set: multi-hot, arch::pooling)
//   labels [B]
// Parameters: one flat buffer in dense_layout order (read-only here).
#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "model/arch.hpp"
#include "model/cross.hpp"
#include "model/dense_layout.hpp"
#include "model/interaction.hpp"

namespace model {

// Per-caller scratch; sized on first use, reused afterwards (no steady-state
// allocation). Not shared between threads.
struct workspace {
  std::vector<Eigen::MatrixXf> bottom_acts; // [layers+1] of [width, B]
  std::vector<Eigen::MatrixXf> top_acts;    // [layers+1] of [width, B]
  interaction_scratch inter;
  cross_scratch cross;
  Eigen::MatrixXf d_top, d_top_in, d_bottom, scratch;
  std::vector<float> pooled, d_pooled; // multi-hot: [dim, B*T] pooled bags and their gradient
  Eigen::VectorXf logits;    // [B]
  double loss_sum = 0.0;     // sum of per-example BCE over the batch
};

class dlrm {
public:
  explicit dlrm(const arch& a);

  const arch& architecture() const { return arch_; }
  const dense_layout& layout() const { return layout_; }

  // Logits only (evaluation). Result in ws.logits.
  void forward(const float* params, const float* dense, const embedding_input& emb,
               std::size_t batch, workspace& ws) const;

  // Forward, loss and backward for a mean-over-batch BCE loss. Fills ws.logits
  // and ws.loss_sum; overwrites grad_params [layout().size()] and
  // grad_rows [dim * emb.num_rows] (the summed gradient of each row).
  void forward_backward(const float* params, const float* dense, const embedding_input& emb,
                        const float* labels, std::size_t batch, workspace& ws, float* grad_params,
                        float* grad_rows) const;

  // Forward + backward FLOPs per example (MLP GEMMs and interaction GEMMs),
  // for GFLOP/s reporting: 2 per MAC, backward counted as twice the forward.
  double flops_per_example() const;

private:
  // emb itself, or (a multi-hot batch) the bags pooled into ws.pooled.
  embedding_input pooled_input(const embedding_input& emb, std::size_t batch, workspace& ws) const;

  arch arch_;
  dense_layout layout_;
};

} // namespace model
