// hogwild_worker's lookups and failures (see hogwild_worker.hpp):
//   worker -> shard s: lookup;  shard s -> worker: embedding_rows
//   dct.mp: worker -> shard s: lookup(sparse); shard s -> worker: sparse_rows
//   trainer -> worker: rebind(s, handle)   (recovery.mode=partial)
#include "actors/hogwild_worker_detail.hpp"

#include <algorithm>

#include <caf/actor_system.hpp>
#include <caf/sec.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "messages/errors.hpp"

namespace actors::worker_detail {

namespace {

std::string shard_name(std::size_t s) { return "embedding-shard-" + std::to_string(s); }

// Batch seq's lookup at shard s waits for the shard's restart (once).
void await_restart(self_ptr self, std::uint64_t seq, std::size_t s) {
  auto& st = self->state;
  if (st.finished() || st.slots[seq % 2].seq() != seq || !st.slots[seq % 2].awaits(s))
    return;
  if (st.awaiting.size() <= s)
    st.awaiting.resize(s + 1);
  auto& w = st.awaiting[s];
  if (std::find(w.begin(), w.end(), seq) != w.end())
    return;
  w.push_back(seq);
  spdlog::info("{}: {} is down; batch {} waits for its restart", st.name, shard_name(s), seq);
}

// Shard s's current handle is gone: no lookup goes to it until the rebind.
void mark_down(self_ptr self, std::size_t s) {
  auto& st = self->state;
  if (s < st.shard_down.size())
    st.shard_down[s] = 1;
}

// A reply or error of a lookup sent before shard s's handle changed or died:
// the lookup has gone again (or waits), so this one is ignored.
bool stale(self_ptr self, std::size_t s, std::uint64_t gen) {
  const auto& g = self->state.lookup_gen;
  return s < g.size() && g[s] != gen;
}

} // namespace

void quit_with(self_ptr self, messages::errc code, std::string what) {
  auto& st = self->state;
  if (st.finished())
    return;
  st.phase = worker_phase::finished;
  spdlog::error("{}", what);
  self->quit(messages::make_error(code, std::move(what)));
}

void fail(self_ptr self, const std::string& peer, messages::errc down_code,
          const caf::error& err) {
  quit_with(self, messages::request_failure(err, down_code),
            self->state.name + ": " + peer + ": " + self->system().render(err));
}

void fail(self_ptr self, const std::string& peer, messages::errc code, const std::string& what) {
  quit_with(self, code, self->state.name + ": " + peer + ": " + what);
}

caf::duration request_timeout(const worker_state& st) {
  return st.watchdog() ? caf::infinite : caf::duration{st.cfg.timeout};
}

namespace {

bool waits_for_restart(const worker_state& st, std::size_t s, std::uint64_t seq) {
  return s < st.awaiting.size() &&
         std::find(st.awaiting[s].begin(), st.awaiting[s].end(), seq) != st.awaiting[s].end();
}

} // namespace

void watchdog_tick(self_ptr self) {
  auto& st = self->state;
  if (st.finished() || !st.watchdog())
    return;
  const auto now = self->clock().now();
  const auto limit = std::chrono::duration_cast<clock_type::duration_type>(st.cfg.timeout);
  const auto ms = std::to_string(st.cfg.timeout.count()) + " ms";
  if (st.input == input_phase::asked && now - st.reader_sent >= limit) {
    fail(self, "reader", messages::errc::request_timeout,
         "no reply to the request for batch " + std::to_string(st.next_seq - 1) + " within " + ms);
    return;
  }
  if (st.inflight) {
    const auto& slot = st.slots[*st.inflight % 2];
    const auto& sent = st.lookup_sent[*st.inflight % 2];
    for (std::size_t s = 0; s < slot.num_shards() && s < sent.size(); ++s)
      if (slot.awaits(s) && !waits_for_restart(st, s, *st.inflight) && now - sent[s] >= limit) {
        fail(self, shard_name(s), messages::errc::request_timeout,
             "no reply to the lookup of batch " + std::to_string(*st.inflight) + " within " + ms);
        return;
      }
  }
  if (st.sync_pending && now - st.sync_sent >= limit) {
    fail(self, "syncer", messages::errc::request_timeout, "no reply to sync within " + ms);
    return;
  }
  const auto period = std::max(limit / 4, clock_type::duration_type(std::chrono::milliseconds(1)));
  self->delayed_send(self, period, messages::tick_atom::value);
}

void send_lookup(self_ptr self, std::uint64_t seq, std::size_t s) {
  auto& st = self->state;
  if (s < st.shard_down.size() && st.shard_down[s]) {
    await_restart(self, seq, s); // nothing would answer: wait for the new handle
    return;
  }
  messages::lookup_request req;
  req.batch = seq;
  st.slots[seq % 2].shard_keys(s, req.keys.values);
  auto& sent = st.lookup_sent[seq % 2];
  if (sent.size() != st.cfg.shards.size())
    sent.resize(st.cfg.shards.size());
  sent[s] = self->clock().now();
  const std::uint64_t gen = s < st.lookup_gen.size() ? st.lookup_gen[s] : 0;
  auto on_error = [=](caf::error& err) {
    if (stale(self, s, gen))
      return;
    if (self->state.cfg.shard_restarts && err == caf::sec::request_receiver_down) {
      mark_down(self, s);
      await_restart(self, seq, s);
    }
    else
      fail(self, shard_name(s), messages::errc::shard_down, err);
  };
  if (st.cfg.dct.mp) {
    self
      ->request(st.cfg.shards[s], request_timeout(st), messages::lookup_atom::value,
                messages::sparse_atom::value, std::move(req))
      .then(
        [=](messages::sparse_rows& r) {
          if (stale(self, s, gen))
            return;
          auto& at = self->state.rows_gen[seq % 2];
          at.resize(self->state.cfg.shards.size());
          at[s] = gen;
          on_sparse_rows(self, seq, s, r);
        },
        on_error);
    return;
  }
  self->request(st.cfg.shards[s], request_timeout(st), messages::lookup_atom::value,
                std::move(req))
    .then(
      [=](messages::embedding_rows& r) {
        if (!stale(self, s, gen))
          on_rows(self, seq, s, r);
      },
      on_error);
}

void gather_local(self_ptr self, worker_batch& slot) {
  const auto& st = self->state;
  for (std::size_t s = 0; s < slot.num_shards(); ++s)
    if (slot.shard_size(s) > 0)
      slot.gather_rows(s, *st.cfg.local_rows[s]);
}

void watch_shards(self_ptr self) {
  auto& st = self->state;
  if (!st.cfg.shard_restarts)
    return;
  st.lookup_gen.assign(st.cfg.shards.size(), 0);
  st.shard_down.assign(st.cfg.shards.size(), 0);
  for (auto& h : st.cfg.shards)
    self->monitor(h);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    for (std::size_t s = 0; s < st.cfg.shards.size(); ++s)
      if (st.cfg.shards[s].address() == dm.source) { // the current handle (not a replaced one)
        ++st.lookup_gen[s];
        mark_down(self, s);
        if (st.inflight)
          await_restart(self, *st.inflight, s);
      }
  });
}

void on_rebind(self_ptr self, std::uint32_t s, const caf::strong_actor_ptr& h) {
  auto& st = self->state;
  if (s >= st.cfg.shards.size() || !h) {
    spdlog::warn("{}: rebind of embedding shard {} ignored ({} shards)", st.name, s,
                 st.cfg.shards.size());
    return;
  }
  st.cfg.shards[s] = caf::actor_cast<embedding_shard_actor>(h);
  if (s < st.shard_down.size())
    st.shard_down[s] = 0;
  if (s < st.lookup_gen.size()) {
    ++st.lookup_gen[s]; // lookups still out went to the lost shard (whose DOWN may come later)
    self->monitor(st.cfg.shards[s]);
  }
  std::vector<std::uint64_t> again;
  if (s < st.awaiting.size())
    again.swap(st.awaiting[s]);
  if (st.inflight && std::find(again.begin(), again.end(), *st.inflight) == again.end())
    again.push_back(*st.inflight);
  for (auto seq : again)
    if (!st.finished() && st.slots[seq % 2].seq() == seq && st.slots[seq % 2].awaits(s))
      send_lookup(self, seq, s);
}

namespace {

// Stores shard s's rows of batch seq (the reply's `batch`, `n_floats` of
// them, `bytes` on the wire) with set(slot), or fails the worker naming the
// shard; then advance.
template <class Set>
void store_rows(self_ptr self, std::uint64_t seq, std::size_t s, std::uint64_t batch,
                std::size_t n_floats, std::uint64_t bytes, Set set) {
  auto& st = self->state;
  auto& slot = st.slots[seq % 2];
  if (batch != seq || slot.seq() != seq || !set(slot)) {
    fail(self, shard_name(s), messages::errc::bad_request,
         "reply for batch " + std::to_string(batch) + " with " + std::to_string(n_floats) +
           " floats, expected batch " + std::to_string(seq) + " with " +
           std::to_string(slot.shard_size(s) * st.cfg.arch.dim));
    return;
  }
  st.stats.lookup_bytes += bytes;
  if (st.cfg.progress)
    live_progress::count(st.cfg.progress->shard_lookup_bytes, s, bytes);
  advance(self);
}

} // namespace

void on_rows(self_ptr self, std::uint64_t seq, std::size_t s, messages::embedding_rows& r) {
  if (self->state.finished())
    return;
  store_rows(self, seq, s, r.batch, r.rows.size(), r.rows.bytes(), [&](worker_batch& slot) {
    return slot.set_rows(s, r.rows.data(), r.rows.size());
  });
}

void on_sparse_rows(self_ptr self, std::uint64_t seq, std::size_t s, messages::sparse_rows& r) {
  auto& st = self->state;
  if (st.finished())
    return;
  const auto& slot = st.slots[seq % 2];
  const std::size_t n = slot.seq() == seq ? slot.shard_size(s) * st.cfg.arch.dim : 0;
  if (auto err = model::decode(r.payload.data(), r.payload.size(), std::uint32_t(n), st.mp_vec)) {
    fail(self, shard_name(s), messages::errc::bad_request,
         "thresholded reply for batch " + std::to_string(r.batch) + ": " + *err);
    return;
  }
  // Dynamic tables: the ids without a row and the rows new to this worker
  // (model/dct_mp_dynamic.hpp), for the push.
  if (st.cfg.dynamic) {
    if (auto err = model::decode_row_marks(r.marks.data(), r.marks.size(),
                                           n / st.cfg.arch.dim, st.mp_marks)) {
      fail(self, shard_name(s), messages::errc::bad_request,
           "thresholded reply for batch " + std::to_string(r.batch) + ": " + *err);
      return;
    }
  }
  // The decode and the scatter into the batch's rows (set_rows): the
  // worker's share of a thresholded reply, as the shard's is of a push.
  count(work::sparse_decode, double(n / st.cfg.arch.dim), double(st.cfg.arch.dim));
  st.stats.mp_rows_sent += st.mp_vec.nnz();
  st.stats.mp_rows_of += n;
  st.stats.mp_refreshes += r.refreshes;
  store_rows(self, seq, s, r.batch, n, r.payload.bytes() + r.marks.bytes(),
             [&](worker_batch& slot) {
               if (!slot.set_rows(s, st.mp_vec))
                 return false;
               if (st.cfg.dynamic)
                 slot.set_marks(s, st.mp_marks);
               return true;
             });
}

} // namespace actors::worker_detail
