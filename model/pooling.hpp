#pragma once
// Per-field pooling of multi-hot bags (data.multi-hot, model.pooling): a
// field that holds several ids reads the sum or the mean of their rows, one
// vector per (example, table) as the interaction expects. An empty bag pools
// to the zero vector (with either kind). Pure math, no allocation.
#include <cstddef>

#include "model/arch.hpp"
#include "model/interaction.hpp"

namespace model {

// pooled[:, f] ([dim, fields] column-major) = the pooling of the rows
// emb.column(i) for i in [emb.offsets[f], emb.offsets[f + 1]). Pre:
// emb.offsets is set (fields + 1 entries).
void pool_forward(const embedding_input& emb, std::size_t fields, std::size_t dim,
                  pooling_kind kind, float* pooled);

// The backward of pool_forward: d_rows ([dim, emb.num_rows], zeroed first)
// gets w_f * d_pooled[:, f] added for every id of field f, w_f = 1 (sum) or
// 1 / |bag f| (mean), so a row used by several ids or fields receives the
// sum of their gradients.
void pool_backward(const embedding_input& emb, std::size_t fields, std::size_t dim,
                   pooling_kind kind, const float* d_pooled, float* d_rows);

} // namespace model
