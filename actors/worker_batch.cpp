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

namespace {

// Dynamic tables: a tag of (table, id) to de-duplicate by. Distinct pairs
// share one with probability 2^-64 a pair; it decides no row, only which
// positions of the batch read the same reply.
std::uint64_t pair_tag(std::size_t table, std::uint64_t id) {
  return id ^ model::mix64(0x7AB1E000ull + table);
}

} // namespace

void worker_batch::prepare_dynamic(const model::arch& a, std::size_t num_shards) {
  const std::size_t n = batch_.cat.size(), T = a.num_tables;
  const bool bags = batch_.cat_offsets.size() > 0;
  const std::size_t fields = bags ? batch_.cat_offsets.size() - 1 : n;
  std::vector<std::uint32_t>& table_of = table_of_;
  table_of.resize(n);
  for (std::size_t f = 0, t = 0; f < fields; ++f) {
    const std::size_t lo = bags ? batch_.cat_offsets.values[f] : f;
    const std::size_t hi = bags ? batch_.cat_offsets.values[f + 1] : f + 1;
    for (std::size_t i = lo; i < hi; ++i) {
      keys_[i] = pair_tag(t, batch_.cat.values[i]);
      table_of[i] = std::uint32_t(t);
    }
    if (++t == T)
      t = 0;
  }
  index_.build(keys_.data(), n);
  const auto& unique = index_.unique();
  rows_of_.resize(unique.size() * 2);
  const auto& inv = index_.inverse();
  for (std::size_t i = 0; i < n; ++i) { // every unique row's first position names it
    rows_of_[std::size_t{inv[i]} * 2] = table_of[i];
    rows_of_[std::size_t{inv[i]} * 2 + 1] = batch_.cat.values[i];
  }
  for (std::size_t u = 0; u < unique.size(); ++u)
    shard_pos_[model::id_owner(rows_of_[u * 2 + 1], num_shards)].push_back(std::uint32_t(u));
}

void worker_batch::prepare(std::uint64_t seq, messages::example_batch&& b, const model::arch& a,
                           std::size_t num_shards, bool dynamic) {
  seq_ = seq;
  dim_ = a.dim;
  dynamic_ = dynamic;
  batch_ = std::move(b);
  const std::size_t n = batch_.cat.size();
  keys_.resize(n);
  shard_pos_.resize(num_shards);
  for (auto& p : shard_pos_)
    p.clear();
  if (dynamic)
    prepare_dynamic(a, num_shards);
  else if (batch_.cat_offsets.size() > 0) // multi-hot: every id of every bag
    model::make_bag_keys(batch_.cat.data(), batch_.cat_offsets.data(),
                         batch_.cat_offsets.size() - 1, a.num_tables, a.rows_per_table,
                         keys_.data());
  else
    model::make_keys(batch_.cat.data(), n, a.num_tables, a.rows_per_table, keys_.data());
  const auto& unique = index_.unique();
  if (!dynamic) {
    index_.build(keys_.data(), n);
    for (std::size_t u = 0; u < unique.size(); ++u)
      shard_pos_[model::key_owner(unique[u], num_shards)].push_back(static_cast<std::uint32_t>(u));
  }
  answered_.assign(num_shards, 0);
  missing_ = 0;
  for (const auto& p : shard_pos_)
    missing_ += p.empty() ? 0 : 1;
  rows_.resize(unique.size() * dim_);
  if (dynamic)
    marks_.assign(unique.size(), 0);
}

void worker_batch::set_marks(std::size_t s, const model::row_marks& m) {
  const auto& pos = shard_pos_[s];
  for (auto k : m.marked)
    marks_[pos[k / 2]] = (k & 1) ? model::mark_fresh : model::mark_absent;
}

void worker_batch::shard_marks(std::size_t s, std::vector<std::uint8_t>& out) const {
  const auto& pos = shard_pos_[s];
  out.resize(pos.size());
  for (std::size_t j = 0; j < pos.size(); ++j)
    out[j] = marks_.empty() ? 0 : marks_[pos[j]];
}

void worker_batch::shard_keys(std::size_t s, std::vector<std::uint64_t>& out) const {
  const auto& unique = index_.unique();
  out.clear();
  if (dynamic_) {
    out.reserve(shard_pos_[s].size() * 2);
    for (auto u : shard_pos_[s]) {
      out.push_back(rows_of_[std::size_t{u} * 2]);
      out.push_back(rows_of_[std::size_t{u} * 2 + 1]);
    }
    return;
  }
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
