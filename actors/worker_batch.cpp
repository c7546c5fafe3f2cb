#include "actors/worker_batch.hpp"

#include <algorithm>
#include <cstring>

#include "model/shard_layout.hpp"

namespace actors {

std::string worker_batch::validate(const messages::example_batch& b, const model::arch& a) {
  const std::size_t n = b.size();
  if (b.num_dense != a.num_dense || b.num_cat != a.num_tables)
    return "batch has " + std::to_string(b.num_dense) + " dense and " + std::to_string(b.num_cat) +
           " categorical columns, the model expects " + std::to_string(a.num_dense) + " and " +
           std::to_string(a.num_tables);
  if (b.dense.size() != n * a.num_dense)
    return "batch buffers do not match its " + std::to_string(n) + " labels";
  if (b.cat_offsets.size() == 0) {
    if (b.cat.size() != n * a.num_tables)
      return "batch buffers do not match its " + std::to_string(n) + " labels";
    return {};
  }
  // Multi-hot: offsets from 0, never decreasing, ending at the ids.
  const auto& o = b.cat_offsets.values;
  if (o.size() != n * a.num_tables + 1 || o.front() != 0 || o.back() != b.cat.size())
    return "batch bag offsets do not match its " + std::to_string(n) + " labels and " +
           std::to_string(b.cat.size()) + " ids";
  for (std::size_t i = 1; i < o.size(); ++i)
    if (o[i] < o[i - 1])
      return "batch bag offsets decrease at field " + std::to_string(i - 1);
  return {};
}

void worker_batch::prepare(std::uint64_t seq, messages::example_batch&& b, const model::arch& a,
                           std::size_t num_shards) {
  seq_ = seq;
  dim_ = a.dim;
  batch_ = std::move(b);
  const std::size_t n = batch_.cat.size();
  keys_.resize(n);
  if (batch_.cat_offsets.size() > 0) // multi-hot: every id of every bag
    model::make_bag_keys(batch_.cat.data(), batch_.cat_offsets.data(),
                         batch_.cat_offsets.size() - 1, a.num_tables, a.rows_per_table,
                         keys_.data());
  else
    model::make_keys(batch_.cat.data(), n, a.num_tables, a.rows_per_table, keys_.data());
  index_.build(keys_.data(), n);
  shard_pos_.resize(num_shards);
  for (auto& p : shard_pos_)
    p.clear();
  const auto& unique = index_.unique();
  for (std::size_t u = 0; u < unique.size(); ++u)
    shard_pos_[model::key_owner(unique[u], num_shards)].push_back(static_cast<std::uint32_t>(u));
  answered_.assign(num_shards, 0);
  missing_ = 0;
  for (const auto& p : shard_pos_)
    missing_ += p.empty() ? 0 : 1;
  rows_.resize(unique.size() * dim_);
}

void worker_batch::shard_keys(std::size_t s, std::vector<std::uint64_t>& out) const {
  const auto& unique = index_.unique();
  out.clear();
  out.reserve(shard_pos_[s].size());
  for (auto u : shard_pos_[s])
    out.push_back(unique[u]);
}

bool worker_batch::set_rows(std::size_t s, const float* rows, std::size_t n_floats) {
  const auto& pos = shard_pos_[s];
  if (pos.empty() || answered_[s] || n_floats != pos.size() * dim_)
    return false;
  for (std::size_t j = 0; j < pos.size(); ++j)
    std::memcpy(rows_.data() + std::size_t{pos[j]} * dim_, rows + j * dim_, sizeof(float) * dim_);
  answered_[s] = 1;
  --missing_;
  return true;
}

bool worker_batch::set_rows(std::size_t s, const model::sparse_vector& rows) {
  const auto& pos = shard_pos_[s];
  if (pos.empty() || answered_[s] || rows.size != pos.size() * dim_)
    return false;
  for (auto p : pos)
    std::fill_n(rows_.data() + std::size_t{p} * dim_, dim_, 0.0f);
  for (std::size_t k = 0; k < rows.nnz(); ++k) {
    const std::size_t i = rows.index[k];
    rows_[std::size_t{pos[i / dim_]} * dim_ + i % dim_] = rows.value[k];
  }
  answered_[s] = 1;
  --missing_;
  return true;
}

bool worker_batch::gather_rows(std::size_t s, const hogwild_rows& rows) {
  const auto& pos = shard_pos_[s];
  if (pos.empty() || answered_[s])
    return false;
  rows.gather(index_.unique().data(), pos.data(), pos.size(), rows_.data());
  answered_[s] = 1;
  --missing_;
  return true;
}

void worker_batch::apply_grads(std::size_t s, const float* grad_unique, hogwild_rows& rows) const {
  const auto& pos = shard_pos_[s];
  rows.apply(index_.unique().data(), pos.data(), pos.size(), grad_unique);
}

void worker_batch::shard_grads(std::size_t s, const float* grad_unique,
                               std::vector<float>& out) const {
  const auto& pos = shard_pos_[s];
  out.resize(pos.size() * dim_);
  for (std::size_t j = 0; j < pos.size(); ++j)
    std::memcpy(out.data() + j * dim_, grad_unique + std::size_t{pos[j]} * dim_,
                sizeof(float) * dim_);
}

} // namespace actors
