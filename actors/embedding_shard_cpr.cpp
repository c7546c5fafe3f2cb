// CPR saves of one embedding shard (see embedding_shard_cpr.hpp):
//   shard -> shard: tick (every cfg.cpr.interval while pushes come)
//   coordinator -> restarted shard: recover; reply (bytes, saves, newest ns)
#include "actors/embedding_shard_cut.hpp"
#include "actors/work.hpp"

#include <chrono>
#include <limits>
#include <utility>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/cpr_files.hpp"
#include "messages/errors.hpp"

namespace actors::shard_cpr_detail {

namespace {

checkpoint::cpr_shape shape_of(const embedding_shard_state& st) {
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

} // namespace

void init(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.cfg.cpr;
  st.cpr.chooser.emplace(cfg.policy, st.cfg.num_tables * st.local_rows, cfg.fraction,
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
  for (auto k : g.keys.values)
    st.cpr.chooser->touched(st.flat_row(st.local_key(k)));
  arm(self);
}

void on_tick(self_ptr self) {
  auto& st = self->state;
  auto& c = st.cpr;
  const bool base = std::exchange(c.base_due, false);
  if (!base)
    c.armed = false;
  if (!c.chooser || (!base && c.chooser->pending_updates() == 0))
    return; // idle: the next push re-arms
  const store_timer store(self->system());
  // (The base save leaves the policy's schedule alone: nothing was pushed.)
  auto choice = base ? checkpoint::row_choice{} : c.chooser->plan_save();
  choice.full = choice.full || base;
  checkpoint::cpr_save_info info;
  std::string err;
  const auto& w = st.tables->weights();
  const auto& a = st.tables->accumulators();
  const bool ok = checkpoint::write_cpr_save(st.cfg.cpr.folder, shape_of(st), c.next_seq,
                                             clock_ns(self), w.data(), a.data(),
                                             choice.full ? nullptr : &choice.rows, &info, &err);
  if (ok)
    count(work::checkpoint_gather, double(info.bytes));
  auto* k = st.cfg.cpr.counters.get();
  if (!ok) {
    spdlog::error("{}: CPR save {} failed: {}", st.who(), c.next_seq, err);
    if (k)
      ++k->failed_saves;
  } else { // landed: only now are its rows forgotten (a failed save keeps them)
    if (!base)
      c.chooser->saved(choice);
    ++c.next_seq;
    const auto ns = store.ns(double(info.bytes), st.cfg.cpr.storage_gbps);
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
  arm(self);
}

caf::result<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t> on_recover(self_ptr self) {
  auto& st = self->state;
  const store_timer store(self->system());
  checkpoint::cpr_loaded got;
  auto& w = st.tables->weights();
  auto& a = st.tables->accumulators();
  if (auto e = checkpoint::load_cpr_chain(st.cfg.cpr.folder, shape_of(st), w.data(), a.data(),
                                          &got))
    return messages::make_error(messages::errc::io_error, st.who() + ": cannot recover: " + *e);
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
