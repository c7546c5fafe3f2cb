// The shard's data plane on hashed tables (actors/embedding_shard.hpp):
// lookups (plain and dct.mp's thresholded ones), pushes (copied on write
// while a cut's file is written) and the dump. The behaviour that receives
// them is in embedding_shard.cpp; dynamic tables in embedding_shard_dynamic.cpp.
#include "actors/embedding_shard.hpp"
#include "actors/embedding_shard_cut.hpp"

#include "messages/errors.hpp"

namespace actors {

using messages::errc;
using messages::make_error;

caf::error embedding_shard_state::check_lookup(const messages::lookup_request& req) const {
  std::string why;
  for (auto k : req.keys.values)
    if (!owns(k, &why))
      return make_error(errc::bad_request,
                        who() + ": lookup of batch " + std::to_string(req.batch) + ": " + why);
  return {};
}

void embedding_shard_state::copy_rows(const std::vector<std::uint64_t>& keys, float* out) const {
  tables->gather(keys.data(), nullptr, keys.size(), cfg.num_shards, out);
}

caf::expected<messages::embedding_rows>
embedding_shard_state::lookup(const messages::lookup_request& req) const {
  if (auto err = check_lookup(req))
    return err;
  messages::embedding_rows out;
  out.batch = req.batch;
  out.rows.values.resize(req.keys.size() * cfg.dim);
  copy_rows(req.keys.values, out.rows.data());
  return out;
}

caf::expected<messages::sparse_rows>
embedding_shard_state::sparse_lookup(const messages::lookup_request& req) {
  if (!mp)
    return make_error(errc::bad_request, who() + ": a thresholded lookup (dct.mp) of batch " +
                                             std::to_string(req.batch) +
                                             ", but dct.mp is off at this shard");
  if (auto err = check_lookup(req))
    return err;
  mp_rows.resize(req.keys.size() * cfg.dim);
  copy_rows(req.keys.values, mp_rows.data());
  const auto before = mp->counts().refreshes;
  mp->encode(req.keys.data(), mp_rows.data(), req.keys.size(), cfg.dim, mp_out);
  if (cfg.dct.mp_half_rows) // the rounding is part of the forward pass, like the threshold
    model::round_to_half(mp_out);
  messages::sparse_rows out;
  out.batch = req.batch;
  out.refreshes = std::uint32_t(mp->counts().refreshes - before);
  out.payload.values = model::encode(mp_out);
  return out;
}

caf::expected<messages::embedding_grads>
embedding_shard_state::expand(messages::sparse_grads& g, const caf::actor_addr& from) {
  const std::size_t words = dyn ? 2 : 1; // dyn: (table, id) pairs
  messages::embedding_grads out;
  if (g.rows == messages::rows_keyed) {
    out.keys = std::move(g.keys);
  } else if (g.rows > messages::rows_placed_all || !g.keys.values.empty()) {
    return make_error(errc::bad_request,
                      who() + ": thresholded push of form " + std::to_string(g.rows) + " with " +
                        std::to_string(g.keys.size()) +
                        " keys, expected form 0 (rows named by keys) or 1-2 (rows named by their "
                        "place in the batch's lookup, no keys)");
  } else if (const auto w = known_mp_worker(from);
             w == max_mp_workers || !mp_held.take(w, g.batch, out.keys.values)) {
    return make_error(errc::bad_request,
                      who() + ": thresholded push of batch " + std::to_string(g.batch) +
                        " names its rows by their place in that batch's lookup, which this shard "
                        "does not hold (it keeps each sender's last " +
                        std::to_string(held_lookups::per_worker) +
                        " thresholded lookups; dct.mp-push-places)");
  }
  const std::size_t n = out.keys.size() / words * cfg.dim;
  std::optional<std::string> err;
  if (n > 0xFFFFFFFFu)
    err = "more than 2^32 - 1 entries";
  else
    err = model::decode(g.payload.data(), g.payload.size(), std::uint32_t(n), mp_in);
  if (err)
    return make_error(errc::bad_request,
                      who() + ": thresholded push of " + std::to_string(out.keys.size() / words) +
                        (g.rows == messages::rows_keyed ? " keyed rows: "
                                                        : " rows of batch " + std::to_string(g.batch) +
                                                            "'s lookup: ") +
                        *err);
  if (g.rows == messages::rows_placed) // the rows that carry an entry, as a keyed push names
    model::drop_empty_rows(out.keys.values, mp_in, cfg.dim, words);
  out.grads.values.assign(mp_in.size, 0.0f);
  model::scatter_add(mp_in, out.grads.data());
  return out;
}

caf::error embedding_shard_state::push(const messages::embedding_grads& g) {
  if (dyn)
    return dynamic_push(g);
  const auto& keys = g.keys.values;
  const std::size_t dim = cfg.dim;
  if (g.grads.size() != keys.size() * dim)
    return make_error(errc::bad_request, who() + ": push of " + std::to_string(keys.size()) +
                                             " keys with " + std::to_string(g.grads.size()) +
                                             " gradient floats, expected " +
                                             std::to_string(keys.size() * dim));
  // Validate everything first so that a bad push changes nothing.
  std::string why;
  for (auto k : keys)
    if (!owns(k, &why))
      return make_error(errc::bad_request, who() + ": push: " + why);
  const std::size_t n = keys.size();
  // A cut's or a save's file is being written: copy on write.
  const bool cut_writes = writer && !writer->done();
  if (cut_writes || !saves.empty()) {
    cow_keys.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      cow_keys[i] = local_key(keys[i]);
    if (cut_writes)
      writer->before_update(cow_keys);
    for (const auto& s : saves)
      if (s->writer)
        s->writer->before_update(cow_keys);
  }
  tables->apply(keys.data(), nullptr, n, cfg.num_shards, g.grads.data(), cfg.optimizer);
  return {};
}

messages::float_blob embedding_shard_state::dump() const {
  // The tables hold [num_tables * local_rows, dim] in exactly the dump's order.
  return messages::float_blob{tables->weights()};
}

} // namespace actors
