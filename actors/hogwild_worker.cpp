// hogwild_worker message flow (one mini-batch per message, see the header):
//   worker -> reader: next;             reader -> worker: example_batch
//   worker -> shard s: lookup;          shard s -> worker: embedding_rows
//   worker -> reader: next (prefetch);  ... batch i+1's lookups go out
//   (cluster.read-ahead: the request for batch i+2 goes out before them)
//   worker -> shard s: push (batch i's summed row gradients)
//   worker -> syncer: sync (FR only);   syncer -> worker: rounds
//   worker -> shard s: end; worker -> trainer: done + worker_stats, then quit
//   trainer -> worker: cut(N); worker -> shard s: cut(N); worker -> trainer: parked(N)
//   trainer -> worker: resume(N)
#include "actors/hogwild_worker.hpp"
#include "actors/work.hpp"
#include "actors/hogwild_worker_detail.hpp"
#include "actors/worker_pipeline.hpp"

#include <ctime>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/sec.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "messages/errors.hpp"
#include "model/metrics.hpp"

namespace actors {

using namespace worker_detail;

namespace {

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void on_batch(self_ptr self, std::uint64_t seq, messages::example_batch& b) {
  auto& st = self->state;
  cpu_meter meter(st.stats.cpu_seconds);
  st.input = input_phase::open;
  if (st.finished())
    return;
  if (b.size() == 0) {
    st.input = input_phase::ended;
    st.stats.malformed_lines = b.malformed;
    st.stats.cut_bags = b.cut_bags;
    advance(self);
    return;
  }
  if (auto what = worker_batch::validate(b, st.cfg.arch); !what.empty()) {
    fail(self, "reader", messages::errc::input_error, "batch " + std::to_string(seq) + ": " + what);
    return;
  }
  st.staged = seq; // its lookups go out once no batch is in flight (advance)
  st.staged_batch = std::move(b);
  advance(self);
}

// The staged batch's lookups go out (local rows: its rows are gathered).
void launch(self_ptr self) {
  auto& st = self->state;
  const auto seq = *st.staged;
  st.staged.reset();
  auto& slot = st.slots[seq % 2];
  count(work::prepare_batch, double(st.staged_batch.cat.size()));
  slot.prepare(seq, std::move(st.staged_batch), st.cfg.arch, st.cfg.shards.size(),
               st.cfg.dynamic);
  st.inflight = seq;
  if (!st.cfg.local_rows.empty())
    gather_local(self, slot);
  else
    for (std::size_t s = 0; s < slot.num_shards(); ++s)
      if (slot.shard_size(s) > 0)
        send_lookup(self, seq, s);
}

void request_batch(self_ptr self) {
  auto& st = self->state;
  const auto seq = st.next_seq++;
  st.input = input_phase::asked;
  st.reader_sent = self->clock().now();
  self->request(st.cfg.reader, request_timeout(st), messages::next_atom::value)
    .then([=](messages::example_batch& b) { on_batch(self, seq, b); },
          [=](caf::error& err) { fail(self, "reader", messages::errc::input_error, err); });
}

// forward/backward on the shared replica, dense update, one push per shard.
void request_sync(self_ptr self) {
  auto& st = self->state;
  // Its step lands before the round it asks for (under the virtual clock it
  // is due at this handler's end, and the round's snapshot comes later; on
  // the real run it is in the replica already): the round's order does not
  // hang on which of the two the scheduler runs first.
  apply_pending(self);
  st.sync_pending = true;
  st.sync_sent = self->clock().now();
  self->request(st.cfg.syncer, request_timeout(st), messages::sync_atom::value)
    .then(
      [=](std::uint64_t) {
        auto& st = self->state;
        const auto now = self->clock().now();
        st.sync_pending = false;
        st.stats.blocked_seconds += seconds_between(st.sync_sent, now);
        if (st.cfg.progress)
          st.cfg.progress->blocked_ns.fetch_add(
            std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now - st.sync_sent).count()),
            std::memory_order_relaxed);
        if (st.idle_since)
          st.idle_since = now; // waiting for rows starts after the sync wait
        advance(self);
      },
      [=](caf::error& err) { fail(self, "syncer", messages::errc::trainer_down, err); });
}

void finish(self_ptr self) {
  auto& st = self->state;
  apply_pending(self);
  st.phase = worker_phase::finished;
  st.stats.busy_seconds = seconds_between(st.started, self->clock().now());
  if (st.mp_residual)
    spdlog::debug("{}: dct.mp residuals of {} rows at the end (bound {}, {} dropped by it)",
                  st.name, st.mp_residual->rows(), st.mp_residual->capacity(),
                  st.mp_residual->evictions());
  for (auto& s : st.cfg.shards) // after every push (per-pair FIFO): no more from here
    self->send(s, messages::end_atom::value);
  self->send(st.cfg.trainer_handle, messages::done_atom::value, st.stats);
  self->quit();
}

// Parks for the pending cut: markers after the last pushes, then the trainer.
void park(self_ptr self) {
  auto& st = self->state;
  apply_pending(self); // the trainer copies the replica once all are parked
  st.cutting = cut_phase::parked;
  st.idle_since.reset(); // the wait for the cut is not a lookup wait
  for (auto& s : st.cfg.shards) // after every push (per-pair FIFO)
    self->send(s, messages::cut_atom::value, st.cut_id);
  self->send(st.cfg.trainer_handle, messages::parked_atom::value, st.cut_id);
}

// The pipeline's one decision point, called after every event: the worker's
// flags as a pipeline_view, the step the pure policy (worker_pipeline.hpp)
// picks, until it says wait.
} // namespace

void worker_detail::advance(self_ptr self) {
  auto& st = self->state;
  for (;;) {
    pipeline_view v;
    v.finished = st.finished();
    v.parked = st.cutting == cut_phase::parked;
    v.draining = st.cutting != cut_phase::none;
    v.sync_pending = st.sync_pending;
    v.has_ready = st.ready.has_value();
    v.has_inflight = st.inflight.has_value();
    v.has_staged = st.staged.has_value();
    v.read_ahead = st.cfg.read_ahead;
    v.inflight_complete = st.inflight && st.slots[*st.inflight % 2].missing() == 0;
    v.reader_pending = st.input == input_phase::asked;
    v.end_of_data = st.input == input_phase::ended;
    switch (next_step(v)) {
      case pipeline_step::launch:
        launch(self);
        break;
      case pipeline_step::train: {
        const auto seq = *st.ready;
        st.ready.reset();
        train(self, st.slots[seq % 2]);
        if (st.sync_due()) {
          if (v.draining || st.sync_pending)
            st.sync_owed = true; // requested at the resume
          else
            request_sync(self);
        }
        break;
      }
      case pipeline_step::promote:
        if (st.idle_since)
          st.stats.lookup_wait_seconds += seconds_between(*st.idle_since, self->clock().now());
        st.idle_since.reset();
        st.ready = st.inflight;
        st.inflight.reset();
        break;
      case pipeline_step::fetch:
        request_batch(self);
        break;
      case pipeline_step::finish:
        finish(self);
        return;
      case pipeline_step::park:
        park(self);
        return;
      case pipeline_step::wait:
        return;
    }
  }
}

namespace {

// A directing message from a sender without the authority for it
// (actors/authority.hpp): logged, no effect.
bool refused(self_ptr self, const std::string& what) {
  const auto& s = self->current_sender();
  if (self->state.cfg.who.directs(s, self->node()))
    return false;
  refuse_sender(self->state.name, what, s, directors_only);
  return true;
}

// Empty when the configuration can run, else what is wrong.
std::string check_config(const worker_config& cfg, std::size_t layout_size) {
  if (!cfg.replica)
    return "no replica";
  if (cfg.replica->size() != layout_size)
    return "replica has " + std::to_string(cfg.replica->size()) + " floats, the model needs " +
           std::to_string(layout_size);
  if (cfg.shards.empty())
    return "no embedding shards";
  if (!cfg.reader)
    return "no reader";
  if (model::is_foreground(cfg.algorithm) && cfg.sync_every > 0 && !cfg.syncer)
    return "foreground sync without a syncer";
  if (!cfg.local_rows.empty()) {
    if (cfg.local_rows.size() != cfg.shards.size())
      return "local rows of " + std::to_string(cfg.local_rows.size()) + " shards, " +
             std::to_string(cfg.shards.size()) + " embedding shards";
    for (std::size_t s = 0; s < cfg.local_rows.size(); ++s)
      if (!cfg.local_rows[s] || !cfg.local_rows[s]->attached())
        return "local rows of embedding shard " + std::to_string(s) + " not initialised";
    if (cfg.dct.mp)
      return "local rows with dct.mp";
  }
  return {};
}

} // namespace

worker_actor::behavior_type hogwild_worker(worker_actor::stateful_pointer<worker_state> self,
                                           worker_config cfg) {
  auto& st = self->state;
  st.name = "worker-" + std::to_string(cfg.trainer) + "-" + std::to_string(cfg.worker);
  st.net = std::make_unique<model::dlrm>(cfg.arch);
  st.grads.resize(st.net->layout().size());
  st.cfg = std::move(cfg);
  if (st.cfg.dct.mp && st.cfg.dct.mp_straight) {
    const auto& d = st.cfg.dct;
    st.mp_grad_tau.emplace(st.cfg.arch.num_tables, d.mp_grad_keep, d.mp_refresh,
                           1000003ull * (st.cfg.trainer + 1) + st.cfg.worker);
    st.mp_residual.emplace(st.cfg.arch.dim, st.cfg.dynamic ? 2 : 1); // dynamic: (table, id)
    st.mp_residual->set_capacity(st.cfg.mp_residual_rows);
  }
  watch_shards(self);
  return {
    [=](messages::start_atom) {
      auto& st = self->state;
      if (refused(self, "start"))
        return;
      if (st.phase != worker_phase::created)
        return; // a second start changes nothing
      st.phase = worker_phase::running;
      st.started = self->clock().now();
      st.exec = execution_of(self->system());
      if (auto what = check_config(st.cfg, st.net->layout().size()); !what.empty()) {
        fail(self, "config", messages::errc::bad_request, what);
        return;
      }
      if (st.watchdog())
        watchdog_tick(self); // arms the first tick
      advance(self);
    },
    [=](messages::tick_atom) {
      if (!refused(self, "a watchdog tick"))
        watchdog_tick(self);
    },
    [=](messages::rebind_atom, std::uint32_t shard, const caf::strong_actor_ptr& h) {
      if (!refused(self, "a rebind of embedding shard " + std::to_string(shard)))
        on_rebind(self, shard, h);
    },
    [=](messages::cut_atom, std::uint64_t id) {
      auto& st = self->state;
      if (refused(self, "a cut"))
        return;
      if (st.finished() || st.cutting != cut_phase::none)
        return; // one cut at a time (the trainer asks for the next after resume)
      st.cutting = cut_phase::draining;
      st.cut_id = id;
      if (st.phase == worker_phase::running)
        advance(self);
      else
        park(self); // not started: nothing in hand
    },
    [=](messages::resume_atom, std::uint64_t id) {
      auto& st = self->state;
      if (refused(self, "resume"))
        return;
      if (st.cutting == cut_phase::none || st.cut_id != id)
        return;
      st.cutting = cut_phase::none;
      if (st.sync_owed && !st.sync_pending && !st.finished()) {
        st.sync_owed = false;
        request_sync(self);
      }
      if (st.phase == worker_phase::running)
        advance(self);
    },
  };
}

} // namespace actors
