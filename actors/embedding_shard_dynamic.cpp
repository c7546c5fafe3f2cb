// An embedding shard's dynamic tables (model.embedding=dynamic), the state's
// half of the protocol in embedding_shard.hpp:
//   worker -> shard: lookup(batch, [table, id]...); shard -> worker: rows (zeros: no row)
//   worker -> shard: push([table, id]..., grads)      (rows that exist only)
//   dct.mp: worker -> shard: lookup(sparse, [table, id]...); shard -> worker:
//     sparse_rows with row marks; worker -> shard: push(sparse_grads)
//   coordinator -> shard: dump(ids) -> every row; stats(ids) -> counters
// The shard is an actor: one message at a time mutates its tables, so the
// rule of model/dynamic_table.hpp (one owner) holds without a lock.
#include "actors/embedding_shard.hpp"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "checkpoint/dynamic_files.hpp"
#include "messages/errors.hpp"
#include "model/shard_layout.hpp"

namespace actors {

using messages::errc;
using messages::make_error;

caf::error embedding_shard_state::init_dynamic() {
  const std::size_t spr = cfg.optimizer.state_per_row(cfg.dim);
  dyn = std::make_shared<model::dynamic_tables>(cfg.num_tables, *cfg.dynamic, cfg.dim, spr,
                                                cfg.model_seed);
  init_dct();
  if (cfg.dct.mp)
    mp_seen.emplace(cfg.num_tables);
  if (auto e = take_rows())
    return e;
  if (cfg.initial_counters)
    take_counters(*cfg.initial_counters);
  cfg.initial_counters.reset();
  return {};
}

caf::error embedding_shard_state::take_rows() {
  if (!cfg.initial_dynamic)
    return {};
  const std::size_t spr = cfg.optimizer.state_per_row(cfg.dim);
  const auto& full = *cfg.initial_dynamic;
  if (full.num_tables() != cfg.num_tables || full.dim() != cfg.dim || full.state_per_row() != spr)
    return make_error(errc::bad_request, who() + ": initial dynamic tables of another shape");
  std::uint64_t newest = 0; // the latest last use of a row it takes
  bool any = false;
  for (std::size_t t = 0; t < cfg.num_tables; ++t) {
    const auto& from = full.table(t);
    auto& to = dyn->table(t);
    for (const auto& r : from.saved_rows()) { // ascending id: the same slots every time
      if (model::id_owner(r.id, cfg.num_shards) != cfg.shard)
        continue;
      newest = std::max(newest, r.last);
      any = true;
      if (to.rows() >= cfg.dynamic->max_rows)
        return make_error(errc::bad_request,
                          who() + ": the checkpoint gives table " + std::to_string(t) +
                            " more rows than this shard's " +
                            std::to_string(cfg.dynamic->max_rows) +
                            " (embedding.max-rows / cluster.embedding-shards): raise "
                            "embedding.max-rows");
      const auto slot = from.slot_of(r.id);
      to.insert_row(r, from.row(slot), from.accumulator(slot));
    }
  }
  // The rows keep their last use on the saving run's clock: this shard's
  // clock goes on after the newest of them (from 0, now - last would wrap
  // and the first ttl sweep would expire every row it took).
  if (any)
    dyn_served = newest / std::max<std::uint64_t>(1, cfg.batch_size) + 1;
  cfg.initial_dynamic.reset();
  return {};
}

void embedding_shard_state::take_counters(const checkpoint::shard_counters& k) {
  if (auto e = checkpoint::set_counters(*dyn, k))
    spdlog::warn("{}: {}: admission counts start afresh", who(), *e);
}

std::size_t embedding_shard_state::mp_worker(const caf::actor_addr& a) {
  for (std::size_t w = 0; w < mp_workers.size(); ++w)
    if (mp_workers[w] == a)
      return w;
  if (mp_workers.size() >= max_mp_workers)
    return max_mp_workers;
  mp_workers.push_back(a);
  return mp_workers.size() - 1;
}

std::size_t embedding_shard_state::known_mp_worker(const caf::actor_addr& a) const {
  for (std::size_t w = 0; w < mp_workers.size(); ++w)
    if (mp_workers[w] == a)
      return w;
  return max_mp_workers;
}

caf::error embedding_shard_state::check_pairs(const std::vector<std::uint64_t>& keys,
                                              const char* what) const {
  if (keys.size() % 2 != 0)
    return make_error(errc::bad_request, who() + ": " + what + " of " +
                                             std::to_string(keys.size()) +
                                             " words: dynamic tables take (table, id) pairs");
  for (std::size_t i = 0; i < keys.size(); i += 2) {
    const std::uint64_t t = keys[i], id = keys[i + 1];
    if (t >= cfg.num_tables)
      return make_error(errc::bad_request, who() + ": " + what + ": table " + std::to_string(t) +
                                               " out of range");
    const auto owner = model::id_owner(id, cfg.num_shards);
    if (owner != cfg.shard)
      return make_error(errc::bad_request, who() + ": " + what + ": id " + std::to_string(id) +
                                               " belongs to shard " + std::to_string(owner));
  }
  return {};
}

caf::expected<messages::embedding_rows>
embedding_shard_state::dynamic_lookup(const messages::lookup_request& req) {
  if (auto err = check_pairs(req.keys.values, "lookup"))
    return err;
  messages::embedding_rows out;
  out.batch = req.batch;
  out.rows.values.resize(req.keys.size() / 2 * cfg.dim);
  dynamic_rows(req.keys.values, out.rows.data(), mp_slots);
  return out;
}

void embedding_shard_state::dynamic_rows(const std::vector<std::uint64_t>& keys, float* out,
                                         std::vector<std::uint32_t>& slots) {
  const std::uint64_t now = dyn_served++ * cfg.batch_size;
  for (std::size_t t = 0; t < dyn->num_tables(); ++t)
    dyn->table(t).expire(now);
  const std::size_t n = keys.size() / 2, dim = cfg.dim;
  slots.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t = std::size_t(keys[2 * i]);
    auto& tab = dyn->table(t);
    const auto slot = mp_seen ? model::tracked_lookup(tab, *mp_seen, t, keys[2 * i + 1], now)
                              : tab.train_lookup(keys[2 * i + 1], now);
    slots[i] = slot;
    float* dst = out + i * dim;
    if (slot == model::dynamic_table::no_row)
      std::fill_n(dst, dim, 0.0f);
    else
      std::memcpy(dst, tab.row(slot), dim * sizeof(float));
  }
}

caf::expected<messages::sparse_rows>
embedding_shard_state::dynamic_sparse_lookup(const messages::lookup_request& req, std::size_t w) {
  if (!mp)
    return make_error(errc::bad_request, who() + ": a thresholded lookup (dct.mp) of batch " +
                                             std::to_string(req.batch) +
                                             ", but dct.mp is off at this shard");
  if (auto err = check_pairs(req.keys.values, "lookup"))
    return err;
  if (w >= max_mp_workers)
    return make_error(errc::bad_request, who() + ": thresholded lookups from more than " +
                                             std::to_string(max_mp_workers) + " senders");
  const auto& keys = req.keys.values;
  const std::size_t n = keys.size() / 2;
  mp_rows.resize(n * cfg.dim);
  dynamic_rows(keys, mp_rows.data(), mp_slots);
  const auto before = mp->counts().refreshes;
  mp->encode(keys.data(), mp_rows.data(), n, cfg.dim, mp_out, 2);
  if (cfg.dct.mp_half_rows)
    model::round_to_half(mp_out);
  model::mark_reply(*mp_seen, keys.data(), mp_slots.data(), n, w, mp_marks);
  messages::sparse_rows out;
  out.batch = req.batch;
  out.refreshes = std::uint32_t(mp->counts().refreshes - before);
  out.payload.values = model::encode(mp_out);
  out.marks.values = model::encode_row_marks(mp_marks);
  return out;
}

caf::error embedding_shard_state::dynamic_push(const messages::embedding_grads& g) {
  const auto& keys = g.keys.values;
  const std::size_t n = keys.size() / 2, dim = cfg.dim;
  if (auto err = check_pairs(keys, "push"))
    return err;
  if (g.grads.size() != n * dim)
    return make_error(errc::bad_request, who() + ": push of " + std::to_string(n) + " rows with " +
                                             std::to_string(g.grads.size()) +
                                             " gradient floats, expected " +
                                             std::to_string(n * dim));
  for (std::size_t i = 0; i < n; ++i) {
    auto& tab = dyn->table(std::size_t(keys[2 * i]));
    const auto slot = tab.find(keys[2 * i + 1]);
    if (slot == model::dynamic_table::no_row) { // never admitted, or evicted since the lookup
      ++dyn_gone_rows;
      continue;
    }
    cfg.optimizer.apply(tab.row(slot), tab.accumulator(slot), g.grads.data() + i * dim, dim);
  }
  return {};
}

messages::embedding_grads embedding_shard_state::dynamic_dump() const {
  messages::embedding_grads out;
  const std::size_t dim = cfg.dim;
  for (std::size_t t = 0; t < dyn->num_tables(); ++t) {
    const auto& tab = dyn->table(t);
    for (const auto& r : tab.saved_rows()) {
      out.keys.values.push_back(t);
      out.keys.values.push_back(r.id);
      const float* w = tab.row(tab.slot_of(r.id));
      out.grads.values.insert(out.grads.values.end(), w, w + dim);
    }
  }
  return out;
}

messages::key_blob embedding_shard_state::dynamic_counters() const {
  messages::key_blob out;
  for (std::size_t t = 0; t < dyn->num_tables(); ++t)
    out.values.push_back(dyn->table(t).rows());
  const auto x = dyn->totals();
  out.values.insert(out.values.end(),
                    {x.admissions, x.evictions, x.expired, x.lookups, x.missing, dyn->bytes()});
  return out;
}

} // namespace actors
