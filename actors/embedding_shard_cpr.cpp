// CPR saves of one embedding shard (see embedding_shard_cpr.hpp):
//   shard -> shard: tick (every cfg.cpr.interval while pushes come)
//   coordinator -> restarted shard: recover; reply (bytes, saves, newest ns)
#include "actors/embedding_shard_cut.hpp"
#include "actors/embedding_shard_save.hpp"
#include "actors/off_handler.hpp"
#include "actors/work.hpp"

#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <memory>
#include <thread>
#include <utility>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/cpr_dynamic.hpp"
#include "checkpoint/cpr_files.hpp"
#include "messages/errors.hpp"

namespace actors::shard_cpr_detail {

namespace {

// Dynamic tables: local_rows is the shard's max_rows per table, and a
// policy's rows are the tables' slots (checkpoint/cpr_dynamic.hpp).
checkpoint::cpr_shape shape_of(const embedding_shard_state& st) {
  if (st.dyn)
    return {st.cfg.num_tables, st.dyn->settings().max_rows, st.cfg.dim, st.dyn->state_per_row(),
            st.cfg.shard, st.cfg.num_shards};
  return {st.cfg.num_tables, st.local_rows, st.cfg.dim, st.tables->state_per_row(),
          st.cfg.shard, st.cfg.num_shards};
}

std::int64_t clock_ns(self_ptr self) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           self->clock().now().time_since_epoch())
    .count();
}

void arm(self_ptr self) {
  auto& c = self->state.cpr;
  if (c.armed)
    return;
  c.armed = true;
  self->delayed_send(self, self->state.cfg.cpr.interval, messages::tick_atom::value);
}

// Bookkeeping of a save that ended: counters, log, the next sequence number.
void saved(self_ptr self, bool ok, const checkpoint::cpr_save_info& info,
           const std::string& err, std::uint64_t ns) {
  auto& st = self->state;
  auto& c = st.cpr;
  auto* k = st.cfg.cpr.counters.get();
  if (!ok) {
    spdlog::error("{}: CPR save {} failed: {}", st.who(), c.next_seq, err);
    if (k)
      ++k->failed_saves;
    return;
  }
  ++c.next_seq;
  if (k) {
    ++k->saves;
    k->full_saves += info.full ? 1 : 0;
    k->rows += info.rows;
    k->bytes += info.bytes;
    k->save_ns += ns;
  }
  spdlog::debug("{}: CPR save {} ({}, {} rows, {} bytes)", st.who(), info.seq,
                info.full ? "full" : "partial", info.rows, info.bytes);
}

// The rows are copied out here and the policy forgets them now (updates
// during the write count for the next save). The file is written off the
// handler (actors/off_handler.hpp: by a thread; on the discrete-event engine
// within the handler, which is charged the bytes and the store's time), and
// on_saved finishes.
void save(self_ptr self, checkpoint::row_choice choice, bool base) {
  auto& st = self->state;
  auto& c = st.cpr;
  const auto shape = shape_of(st);
  const auto* chosen = choice.full ? nullptr : &choice.rows;
  // The writer, owning the rows copied out.
  std::function<bool(checkpoint::cpr_save_info*, std::string*)> write;
  std::optional<std::string> bad;
  const auto& folder = st.cfg.cpr.folder;
  const auto seq = c.next_seq;
  const auto at = clock_ns(self);
  if (st.dyn) {
    checkpoint::cpr_dynamic_rows rows;
    bad = checkpoint::gather_cpr_dynamic(shape, *st.dyn, chosen, st.dyn_served, &rows);
    write = [=, rows = std::move(rows)](checkpoint::cpr_save_info* info, std::string* err) {
      return checkpoint::write_cpr_dynamic(folder, shape, seq, at, rows, info, err);
    };
  } else {
    checkpoint::cpr_rows rows;
    bad = checkpoint::gather_cpr_rows(shape, st.tables->weights().data(),
                                      st.tables->accumulators().data(), chosen, &rows);
    write = [=, rows = std::move(rows)](checkpoint::cpr_save_info* info, std::string* err) {
      return checkpoint::write_cpr_rows(folder, shape, seq, at, rows, info, err);
    };
  }
  if (bad) {
    saved(self, false, {}, *bad, 0);
    return;
  }
  auto job = std::make_unique<cpr_background>();
  job->base = base;
  if (base)
    job->taken.choice = std::move(choice);
  else
    job->taken = c.chooser->begin_save(std::move(choice));
  auto* out = job.get();
  c.writing = std::move(job);
  auto thread = off_handler(
    self->system(),
    [out, write = std::move(write), gbps = st.cfg.cpr.storage_gbps,
     store = store_timer(self->system())] {
      out->ok = write(&out->info, &out->err);
      if (out->ok) {
        count(work::checkpoint_gather, double(out->info.bytes));
        out->ns = store.ns(double(out->info.bytes), gbps);
      }
    },
    [me = caf::actor_cast<embedding_shard_actor>(self)] {
      caf::send_as(me, me, messages::done_atom::value, messages::save_atom::value);
    },
    [self] { on_saved(self); });
  if (thread.joinable()) // (else it has finished: on_saved ran)
    c.writing->thread = std::move(thread);
}

} // namespace

void init(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.cfg.cpr;
  st.cpr.chooser.emplace(cfg.policy, shape_of(st).rows(), cfg.fraction,
                         cfg.full_every, cfg.ssu_sample, st.cfg.seed);
  if (cfg.counters) {
    const std::uint64_t b = st.cpr.chooser->tracking_bytes();
    auto& m = cfg.counters->tracking_bytes;
    for (auto old = m.load(); old < b && !m.compare_exchange_weak(old, b);)
      ;
  }
  if (cfg.save_at_start) { // behind what is already queued (embedding_shard_cpr.hpp)
    st.cpr.base_due = true;
    self->send(self, messages::tick_atom::value);
  }
}

void touched(self_ptr self, const messages::embedding_grads& g) {
  auto& st = self->state;
  if (!st.cpr.chooser)
    return;
  if (st.dyn) { // (table, id) pairs: the slot of each row that took the update
    const auto cap = st.dyn->settings().max_rows;
    const auto& k = g.keys.values;
    for (std::size_t i = 0; i + 1 < k.size(); i += 2) {
      const auto slot = st.dyn->table(std::size_t(k[i])).find(k[i + 1]);
      if (slot != model::dynamic_table::no_row)
        st.cpr.chooser->touched(k[i] * cap + slot);
    }
  } else {
    for (auto k : g.keys.values)
      st.cpr.chooser->touched(st.flat_row(st.local_key(k)));
  }
  arm(self);
}

void on_tick(self_ptr self) {
  auto& st = self->state;
  auto& c = st.cpr;
  if (c.writing) { // a save in flight: this tick waits for the next
    c.armed = false;
    arm(self);
    return;
  }
  const bool base = std::exchange(c.base_due, false);
  if (!base)
    c.armed = false;
  if (!c.chooser || (!base && c.chooser->pending_updates() == 0))
    return; // idle: the next push re-arms
  // (The base save leaves the policy's schedule alone: nothing was pushed.)
  auto choice = base ? checkpoint::row_choice{} : c.chooser->plan_save();
  choice.full = choice.full || base;
  save(self, std::move(choice), base);
  arm(self);
}

void on_saved(self_ptr self) {
  auto& st = self->state;
  auto& c = st.cpr;
  if (!c.writing)
    return;
  auto job = std::move(c.writing);
  if (job->thread.joinable())
    job->thread.join();
  if (!job->ok) {
    if (!job->base)
      c.chooser->failed(job->taken); // its rows are chosen again
    saved(self, false, job->info, job->err, 0);
    return;
  }
  if (!job->base)
    c.chooser->landed(job->taken);
  saved(self, true, job->info, {}, job->ns);
}

caf::result<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t> on_recover(self_ptr self) {
  auto& st = self->state;
  const store_timer store(self->system());
  checkpoint::cpr_loaded got;
  std::optional<std::string> bad;
  if (st.dyn) { // the chain's ids and rows, into empty tables
    auto fresh = std::make_shared<model::dynamic_tables>(
      st.cfg.num_tables, *st.cfg.dynamic, st.cfg.dim, st.dyn->state_per_row(), st.cfg.model_seed);
    std::uint64_t served = 0;
    bad = checkpoint::load_cpr_dynamic_chain(st.cfg.cpr.folder, shape_of(st), *fresh, &served,
                                             &got);
    if (!bad && !got.saves.empty()) { // (no chain: the initial tables stay)
      st.dyn = std::move(fresh);
      st.dyn_served = served;
      if (st.mp_seen) // dct.mp: every row is new to every worker (model/dct_mp_dynamic.hpp)
        st.mp_seen->clear();
    }
  } else {
    shard_save_detail::wait_writers(self); // they read the rows being replaced
    auto& w = st.tables->weights();
    auto& a = st.tables->accumulators();
    bad = checkpoint::load_cpr_chain(st.cfg.cpr.folder, shape_of(st), w.data(), a.data(), &got);
  }
  if (bad)
    return messages::make_error(messages::errc::io_error, st.who() + ": cannot recover: " + *bad);
  st.cpr.next_seq = got.next_seq;
  count(work::checkpoint_load, double(got.bytes));
  const auto ns = store.ns(double(got.bytes), st.cfg.cpr.storage_gbps);
  if (auto* k = st.cfg.cpr.counters.get()) {
    ++k->loads;
    k->load_bytes += got.bytes;
    k->load_ns += ns;
  }
  const auto at = got.saves.empty() ? std::numeric_limits<std::int64_t>::min() : got.newest_at_ns;
  spdlog::info("{}: recovered {} save(s), {} bytes", st.who(), got.saves.size(), got.bytes);
  return {got.bytes, std::uint64_t(got.saves.size()), at, clock_ns(self)};
}

} // namespace actors::shard_cpr_detail
