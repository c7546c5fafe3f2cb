// Message flow:
//   worker -> shard: lookup(batch, keys); shard -> worker: rows(batch, rows) or bad_request
//   worker -> shard: push(keys, grads)                 (no reply; bad ones dropped)
//   dct.mp: lookup(sparse, batch, keys) -> sparse_rows; push(sparse_grads)
//   coordinator -> shard: dump; shard -> coordinator: the whole local table
//   dynamic tables (model.embedding=dynamic): embedding_shard_dynamic.cpp
//   checkpoint cuts: embedding_shard_cut.cpp; CPR saves: embedding_shard_cpr.cpp
//   coordinator -> shard: save(FOLDER) -> the file written (embedding_shard_save.cpp);
//   save(offset) -> a piece of it sent instead (multi-node export:
//   embedding_shard_export.cpp)
//   the state's lookups, pushes and dump on hashed tables: embedding_shard_rows.cpp
#include "actors/embedding_shard.hpp"
#include "actors/authority.hpp"
#include "actors/work.hpp"
#include "actors/embedding_shard_cut.hpp"
#include "actors/embedding_shard_save.hpp"

#include <cmath>

#include <caf/actor_system.hpp>
#include <spdlog/spdlog.h>

#include "messages/errors.hpp"
#include "model/shard_layout.hpp"

namespace actors {

using messages::errc;
using messages::make_error;

std::string embedding_shard_state::who() const {
  return std::string{name} + "-" + std::to_string(cfg.shard);
}

caf::error embedding_shard_state::init(embedding_shard_config c) {
  cfg = std::move(c);
  std::string bad;
  if (cfg.num_shards == 0 || cfg.shard >= cfg.num_shards)
    bad = "shard " + std::to_string(cfg.shard) + " of " + std::to_string(cfg.num_shards);
  else if (cfg.num_tables == 0 || cfg.num_tables >= (std::size_t{1} << (64 - model::row_key_shift)))
    bad = "num_tables " + std::to_string(cfg.num_tables) + " out of range";
  else if (cfg.rows_per_table == 0 ||
           cfg.rows_per_table > (std::uint64_t{1} << model::row_key_shift))
    bad = "rows_per_table " + std::to_string(cfg.rows_per_table) + " out of range";
  else if (cfg.dim == 0)
    bad = "dim 0";
  if (!bad.empty())
    return make_error(errc::bad_request, who() + ": bad config: " + bad);
  // Placed pushes: the job's workers hold lookups, twice over (a restarted
  // trainer's are new senders); not bounded by a job: 64.
  mp_held = held_lookups(cfg.max_workers > 0 ? 2 * std::size_t{cfg.max_workers} + 8 : 64);
  if (cfg.dynamic) // no hashed tables (embedding_shard_dynamic.cpp)
    return init_dynamic();
  local_rows = model::local_rows(cfg.rows_per_table, cfg.num_shards);
  tables = std::make_shared<model::embedding_tables>(cfg.num_tables, local_rows, cfg.dim,
                                                     cfg.optimizer.state_per_row(cfg.dim));
  init_dct();
  if (!cfg.initial) {
    tables->init(cfg.seed, std::sqrt(1.0f / static_cast<float>(cfg.rows_per_table)));
    if (cfg.local)
      cfg.local->attach(tables);
    return {};
  }
  const auto& full = *cfg.initial;
  const std::size_t spr = tables->state_per_row();
  if (full.dim() != cfg.dim || full.num_tables() != cfg.num_tables ||
      full.rows_per_table() != cfg.rows_per_table || full.state_per_row() != spr)
    return make_error(errc::bad_request, who() + ": initial tables of another shape");
  for (std::size_t t = 0; t < cfg.num_tables; ++t)
    for (std::uint64_t l = 0; l < local_rows; ++l) {
      const std::uint64_t row = model::global_row(l, cfg.shard, cfg.num_shards);
      if (row >= cfg.rows_per_table)
        break;
      const auto global = model::row_key(t, row), local = model::row_key(t, l);
      std::copy(full.row(global), full.row(global) + cfg.dim, tables->row(local));
      std::copy(full.accumulator(global), full.accumulator(global) + spr,
                tables->accumulator(local));
    }
  cfg.initial.reset(); // the shard holds its rows now
  if (cfg.local)
    cfg.local->attach(tables);
  return {};
}

void embedding_shard_state::init_dct() {
  if (cfg.dct.mp)
    mp.emplace(cfg.num_tables, cfg.dct.mp_keep, cfg.dct.mp_refresh, cfg.seed * 7919 + 17);
}

bool embedding_shard_state::owns(std::uint64_t key, std::string* why) const {
  const auto t = model::key_table(key);
  const auto row = model::key_row(key);
  if (t >= cfg.num_tables || row >= cfg.rows_per_table) {
    *why = "key " + std::to_string(key) + " (table " + std::to_string(t) + ", row " +
           std::to_string(row) + ") out of range";
    return false;
  }
  const auto owner = model::row_owner(row, cfg.num_shards);
  if (owner != cfg.shard) {
    *why = "key " + std::to_string(key) + " (table " + std::to_string(t) + ", row " +
           std::to_string(row) + ") belongs to shard " + std::to_string(owner);
    return false;
  }
  return true;
}

namespace {

using shard_ptr = embedding_shard_actor::stateful_pointer<embedding_shard_state>;

// The sender checks (actors/authority.hpp); an error when refused.
caf::error refused_direction(shard_ptr self, const char* what) {
  const auto& s = self->current_sender();
  if (self->state.cfg.who.directs(s, self->node()))
    return {};
  return refuse_sender(self->state.who(), what, s, directors_only);
}

caf::error refused_data(shard_ptr self, const char* what) {
  const auto& s = self->current_sender();
  if (self->state.cfg.who.data_plane(s, self->node()))
    return {};
  return refuse_sender(self->state.who(), what, s, data_plane_only);
}

// Only the shard itself (its timer, its cut's writer thread) sends these.
caf::error refused_self(shard_ptr self, const char* what) {
  const auto& s = self->current_sender();
  if (s && s->address() == self->address())
    return {};
  return refuse_sender(self->state.who(), what, s, "the shard itself");
}

} // namespace

embedding_shard_actor::behavior_type
embedding_shard(embedding_shard_actor::stateful_pointer<embedding_shard_state> self,
                embedding_shard_config cfg) {
  if (auto err = self->state.init(std::move(cfg))) {
    spdlog::error("{}", messages::error_text(err, self->system()));
    self->quit(std::move(err));
    return embedding_shard_actor::behavior_type::make_empty_behavior();
  }
  self->state.last_cut = self->state.cfg.cuts_over;
  if (!self->state.cfg.cpr.folder.empty())
    shard_cpr_detail::init(self);
  spdlog::debug("{}: {} tables x {} local rows x dim {}", self->state.who(),
                self->state.cfg.num_tables, self->state.local_rows, self->state.cfg.dim);
  return {
    [=](messages::lookup_atom,
        const messages::lookup_request& req) -> caf::result<messages::embedding_rows> {
      if (auto e = refused_data(self, "a lookup"))
        return e;
      auto& st = self->state;
      if (st.dyn) { // (table, id) pairs
        count(work::lookup_rows, double(req.keys.size() / 2), double(st.cfg.dim));
        return st.dynamic_lookup(req);
      }
      count(work::lookup_rows, double(req.keys.size()), double(st.cfg.dim));
      return st.lookup(req);
    },
    [=](messages::push_atom, messages::embedding_grads& g) {
      if (refused_data(self, "a push"))
        return;
      if (shard_cut_detail::hold_push(self, g))
        return; // after this worker's cut marker: applied once the cut is aligned
      shard_cut_detail::apply_push(self, g);
    },
    [=](messages::lookup_atom, messages::sparse_atom,
        const messages::lookup_request& req) -> caf::result<messages::sparse_rows> {
      if (auto e = refused_data(self, "a lookup"))
        return e;
      auto& st = self->state;
      const double dim = double(st.cfg.dim);
      const double rows = double(st.dyn ? req.keys.size() / 2 : req.keys.size()); // dyn: pairs
      count(work::lookup_rows, rows, dim);
      count(work::sparse_lookup, rows, dim);
      const auto& from = self->current_sender();
      const auto w = st.mp_worker(from ? from->address() : caf::actor_addr{});
      auto out = st.dyn ? st.dynamic_sparse_lookup(req, w) : st.sparse_lookup(req);
      if (out && st.cfg.dct.mp_push_places && w < st.max_mp_workers)
        st.mp_held.hold(w, req.batch, req.keys.values); // its push may name rows by place
      return out;
    },
    [=](messages::push_atom, messages::sparse_grads& sg) {
      if (refused_data(self, "a push"))
        return;
      auto& st = self->state;
      const std::size_t sent_rows = st.dyn ? sg.keys.size() / 2 : sg.keys.size();
      const auto& from = self->current_sender();
      auto g = st.expand(sg, from ? from->address() : caf::actor_addr{});
      // Priced by the rows it updates (a placed push's too), else by those it named.
      const std::size_t rows = g ? (st.dyn ? g->keys.size() / 2 : g->keys.size()) : sent_rows;
      count(work::sparse_decode, double(rows), double(st.cfg.dim));
      if (!g) {
        ++self->state.dropped_pushes;
        spdlog::warn("{} (dropped; {} so far)", messages::error_text(g.error(), self->system()),
                     self->state.dropped_pushes);
        return;
      }
      if (shard_cut_detail::hold_push(self, *g))
        return;
      shard_cut_detail::apply_push(self, *g);
    },
    [=](messages::dump_atom) -> caf::result<messages::float_blob> {
      if (auto e = refused_direction(self, "a dump"))
        return e;
      if (self->state.dyn)
        return make_error(errc::bad_request, self->state.who() + ": dynamic tables: dump(ids)");
      return self->state.dump();
    },
    [=](messages::dump_atom, messages::ids_atom) -> caf::result<messages::embedding_grads> {
      if (auto e = refused_direction(self, "a dump"))
        return e;
      if (!self->state.dyn)
        return make_error(errc::bad_request, self->state.who() + ": hashed tables: dump");
      return self->state.dynamic_dump();
    },
    [=](messages::stats_atom, messages::ids_atom) -> caf::result<messages::key_blob> {
      if (auto e = refused_direction(self, "a stats request"))
        return e;
      if (!self->state.dyn)
        return make_error(errc::bad_request, self->state.who() + ": hashed tables: no counters");
      return self->state.dynamic_counters();
    },
    [=](messages::save_atom, const std::string& folder)
      -> caf::result<std::string, std::uint64_t, std::uint32_t> {
      if (auto e = refused_direction(self, "a save"))
        return e;
      return shard_save_detail::on_save(self, folder);
    },
    [=](messages::save_atom, std::uint64_t offset) -> caf::result<messages::file_chunk> {
      if (auto e = refused_direction(self, "a save"))
        return e;
      auto c = self->state.ship(offset);
      if (!c)
        return std::move(c.error());
      return std::move(*c);
    },
    [=](messages::cut_atom, std::uint64_t id, const std::string& folder,
        std::uint32_t workers) -> caf::result<messages::shard_cut_file> {
      if (auto e = refused_direction(self, "a cut request"))
        return e;
      auto rp = self->make_response_promise<messages::shard_cut_file>();
      shard_cut_detail::on_request(self, id, folder, workers, rp);
      return rp;
    },
    [=](messages::cut_atom, std::uint64_t id, const std::string& folder,
        const std::vector<std::string>& workers)
      -> caf::result<messages::shard_cut_file> {
      if (auto e = refused_direction(self, "a cut request"))
        return e;
      auto rp = self->make_response_promise<messages::shard_cut_file>();
      shard_cut_detail::on_request(self, id, folder, workers, rp);
      return rp;
    },
    [=](messages::cut_atom, std::uint64_t id, std::uint64_t offset)
      -> caf::result<messages::file_chunk> {
      if (auto e = refused_direction(self, "a cut file's piece"))
        return e;
      return shard_cut_detail::on_fetch(self, id, offset);
    },
    [=](messages::cut_atom, std::uint64_t id) {
      if (!refused_data(self, "a cut marker"))
        shard_cut_detail::on_marker(self, id);
    },
    [=](messages::cut_atom, std::uint64_t id, messages::resume_atom) {
      if (!refused_direction(self, "a cut given up"))
        shard_cut_detail::on_given_up(self, id);
    },
    [=](messages::end_atom) {
      if (!refused_data(self, "a worker's end"))
        shard_cut_detail::on_end(self);
    },
    [=](messages::done_atom, std::uint64_t id) {
      if (!refused_self(self, "a cut's end"))
        shard_cut_detail::on_written(self, id);
    },
    [=](messages::done_atom, messages::save_atom, std::uint64_t id) {
      if (!refused_self(self, "a save's end"))
        shard_save_detail::on_saved(self, id);
    },
    [=](messages::tick_atom) {
      if (!refused_self(self, "a save tick"))
        shard_cpr_detail::on_tick(self);
    },
    [=](messages::done_atom, messages::save_atom) {
      if (!refused_self(self, "a save's end"))
        shard_cpr_detail::on_saved(self);
    },
    [=](messages::recover_atom)
      -> caf::result<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t> {
      if (auto e = refused_direction(self, "a recover"))
        return e;
      return shard_cpr_detail::on_recover(self);
    },
  };
}

namespace shard_cut_detail {

void apply_push(self_ptr self, const messages::embedding_grads& g) {
  count(work::push_rows, double(g.keys.size()), double(self->state.cfg.dim));
  auto& st = self->state;
  if (auto err = st.push(g)) {
    ++st.dropped_pushes;
    spdlog::warn("{} (dropped; {} so far)", messages::error_text(err, self->system()),
                 st.dropped_pushes);
    return;
  }
  shard_cpr_detail::touched(self, g);
}

} // namespace shard_cut_detail

} // namespace actors
