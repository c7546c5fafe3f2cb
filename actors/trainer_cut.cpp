// A trainer's side of a checkpoint cut (see trainer.hpp):
//   coordinator -> trainer: cut(N, last_round)
//   trainer -> syncer: hold(last_round); trainer -> worker: cut(N)
//   worker -> trainer: parked(N); trainer -> reader: where
//   trainer -> worker: resume(N); trainer -> coordinator: cut_report
#include "actors/trainer_cut.hpp"

#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "messages/errors.hpp"

namespace actors::trainer_cut_detail {

namespace {

using messages::errc;

void fail_cut(self_ptr self, const std::string& what) {
  auto& st = self->state;
  if (!st.cut)
    return;
  auto rp = std::move(st.cut->promise);
  st.cut.reset();
  rp.deliver(messages::make_error(errc::trainer_down, st.name + ": cut: " + what));
}

// Every worker parked and the syncer held: nothing changes the replica now.
void try_complete(self_ptr self) {
  auto& st = self->state;
  if (!st.cut || st.cut->waiting > 0 || !st.cut->held)
    return;
  const auto id = st.cut->id;
  self->request(st.reader, st.cfg.timeout, messages::where_atom::value)
    .then(
      [=](messages::reader_mark& at) {
        auto& st = self->state;
        if (!st.cut || st.cut->id != id)
          return;
        messages::cut_report r;
        r.trainer = st.cfg.trainer;
        r.reader = at;
        r.replica.values = st.replica->snapshot();
        r.state.values = st.replica->state_snapshot();
        r.sync = std::move(st.cut->hold);
        r.progress = progress_of(st, self->clock().now());
        for (std::size_t w = 0; w < st.workers.size(); ++w)
          if (!st.worker_done[w])
            self->send(st.workers[w], messages::resume_atom::value, id);
        r.pause_seconds =
          std::chrono::duration<double>(self->clock().now() - st.cut->began).count();
        auto rp = std::move(st.cut->promise);
        st.cut.reset();
        rp.deliver(std::move(r));
      },
      [=](caf::error& err) { fail_cut(self, "reader: " + self->system().render(err)); });
}

} // namespace

void on_cut(self_ptr self, std::uint64_t id, std::uint64_t last_round,
            caf::typed_response_promise<messages::cut_report> rp) {
  auto& st = self->state;
  if (st.cut) {
    rp.deliver(messages::make_error(errc::bad_request, st.name + ": cut " + std::to_string(id) +
                                                         " while cut " +
                                                         std::to_string(st.cut->id) +
                                                         " is in progress"));
    return;
  }
  st.cut.emplace();
  auto& c = *st.cut;
  c.id = id;
  c.promise = std::move(rp);
  c.began = self->clock().now();
  c.parked.assign(st.workers.size(), 0);
  for (std::size_t w = 0; w < st.workers.size(); ++w) {
    if (st.worker_done[w]) {
      c.parked[w] = 1;
      continue;
    }
    ++c.waiting;
    self->send(st.workers[w], messages::cut_atom::value, id);
  }
  self->request(st.syncer, st.cfg.timeout, messages::hold_atom::value, last_round)
    .then(
      [=](messages::sync_hold& h) {
        auto& st = self->state;
        if (!st.cut || st.cut->id != id)
          return;
        st.cut->held = true;
        st.cut->hold = std::move(h);
        try_complete(self);
      },
      [=](caf::error& err) { fail_cut(self, "syncer hold: " + self->system().render(err)); });
}

void on_worker_parked(self_ptr self, std::size_t w) {
  auto& st = self->state;
  if (!st.cut || st.cut->parked[w])
    return;
  st.cut->parked[w] = 1;
  --st.cut->waiting;
  try_complete(self);
}

} // namespace actors::trainer_cut_detail
