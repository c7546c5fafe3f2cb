// trainer message flow (see the header):
//   coordinator -> trainer: start;  trainer -> syncer, workers: start
//   worker -> trainer: done + worker_stats (xW);  trainer -> syncer: end
//   trainer -> coordinator: worker_stats (the start reply)
//   coordinator -> trainer: stats / sync;  trainer -> syncer: stats
//   coordinator -> trainer: stop(last);  trainer -> syncer: stop(last)
//   trainer -> coordinator: trainer_report
//   DOWN (worker, reader, syncer, shard) -> error reply, exit children, quit
#include "actors/trainer.hpp"
#include "actors/trainer_children.hpp"
#include "actors/trainer_cut.hpp"

#include <cstdio>
#include <cstdlib>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/peer.hpp"
#include "messages/errors.hpp"
#include "model/dense_layout.hpp"

namespace actors {

namespace {

using self_ptr = trainer_actor::stateful_pointer<trainer_state>;
using messages::errc;

// Answers the pending replies with err, logs it and quits; the attached
// functor then stops the children.
void fail(self_ptr self, errc code, const std::string& what) {
  auto& st = self->state;
  if (st.failed)
    return;
  st.failed = true;
  auto err = messages::make_error(code, st.name + ": " + what);
  spdlog::error("{}: {}", st.name, what);
  if (st.start_promise.pending())
    st.start_promise.deliver(err);
  if (st.stop_promise.pending())
    st.stop_promise.deliver(err);
  if (st.cut && st.cut->promise.pending())
    st.cut->promise.deliver(err);
  self->quit(err);
}

void on_down(self_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  const auto peer = st.identify(dm.source);
  if (!dm.reason || peer.role == peer_role::none)
    return; // a normal exit (a worker after done_atom) or not ours
  const auto who = st.name_of(peer);
  if (st.trained && peer.role != peer_role::syncer) {
    // Workers, reader and shards are no longer needed here (a stop ends the
    // workers and the reader itself); only the syncer still has work.
    spdlog::debug("{}: {} down after training: {}", st.name, who, self->system().render(dm.reason));
    return;
  }
  const bool shard = peer.role == peer_role::embedding_shard;
  if (shard && st.cfg.shard_restarts) { // the coordinator restarts it (rebind_atom)
    spdlog::info("{}: {} down ({}); its restart is awaited", st.name, who,
                 self->system().render(dm.reason));
    return;
  }
  const auto code =
    shard ? errc::shard_down : messages::errc_of(dm.reason, errc::trainer_down);
  fail(self, code, who + " failed: " + self->system().render(dm.reason));
}

// Training is over (all workers done, or stopped): tell the syncer, reply.
void finish_training(self_ptr self) {
  auto& st = self->state;
  st.trained = true;
  self->send(st.syncer, messages::end_atom::value);
  if (st.start_promise.pending())
    st.start_promise.deliver(st.total);
}

// A directing message from a sender without the authority (actors/authority.hpp).
caf::error refused(self_ptr self, const std::string& what) {
  const auto& s = self->current_sender();
  if (self->state.cfg.who.directs(s, self->node()))
    return {};
  return refuse_sender(self->state.name, what, s, directors_only);
}

} // namespace

trainer_actor::behavior_type trainer(trainer_actor::stateful_pointer<trainer_state> self,
                                     trainer_config cfg) {
  auto& st = self->state;
  st.name = "trainer-" + std::to_string(cfg.trainer);
  const std::size_t need = model::dense_layout(cfg.arch).size();
  if (cfg.initial_params.size() != need) { // the runtime builds both from one arch
    std::fprintf(stderr, "%s:%d: %s: initial_params has %zu floats, the model needs %zu\n",
                 __FILE__, __LINE__, st.name.c_str(), cfg.initial_params.size(), need);
    std::abort();
  }
  st.replica = std::make_shared<hogwild_replica>(cfg.initial_params, cfg.initial_state);
  st.progress = std::make_shared<live_progress>(cfg.shards.size());
  st.cfg = std::move(cfg);
  st.cfg.initial_params = {}; // the replica holds them now
  st.cfg.initial_state = {};
  trainer_children_detail::spawn_children(self);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  // Killed from outside (the runtime's shutdown or failure path): answer the
  // pending replies instead of leaving them to their requesters' timeouts.
  self->set_exit_handler([=](caf::exit_msg& em) {
    if (!em.reason)
      return;
    auto& st = self->state;
    auto err = messages::make_error(errc::trainer_down,
                                    st.name + ": stopped: " + self->system().render(em.reason));
    if (st.start_promise.pending())
      st.start_promise.deliver(err);
    if (st.stop_promise.pending())
      st.stop_promise.deliver(err);
    if (st.cut && st.cut->promise.pending())
      st.cut->promise.deliver(err);
    self->quit(em.reason);
  });
  return {
    [=](messages::start_atom) -> caf::typed_response_promise<messages::worker_stats> {
      auto& st = self->state;
      // (before the promise: making it takes the sender over)
      auto refusal = refused(self, "start");
      auto rp = self->make_response_promise<messages::worker_stats>();
      if (refusal) {
        rp.deliver(refusal);
        return rp;
      }
      if (st.started) {
        rp.deliver(messages::make_error(errc::bad_request, st.name + ": started twice"));
        return rp;
      }
      st.started = true;
      st.started_at = self->clock().now();
      st.start_promise = rp;
      self->send(st.syncer, messages::start_atom::value);
      for (auto& w : st.workers)
        self->send(w, messages::start_atom::value);
      if (st.workers.empty())
        finish_training(self);
      return rp;
    },
    [=](messages::done_atom, const messages::worker_stats& ws) {
      auto& st = self->state;
      const auto who = caf::actor_cast<caf::actor_addr>(self->current_sender());
      for (std::size_t w = 0; w < st.workers.size(); ++w)
        if (who == st.workers[w].address() && !st.worker_done[w]) {
          st.worker_done[w] = 1;
          accumulate(st.total, ws);
          trainer_cut_detail::on_worker_parked(self, w); // done counts as parked
          if (++st.workers_done == st.workers.size() && !st.trained)
            finish_training(self);
        }
    },
    [=](messages::stats_atom) -> caf::typed_response_promise<messages::progress_report> {
      // (before the promise: making it takes the sender over)
      auto refusal = refused(self, "a progress request");
      auto rp = self->make_response_promise<messages::progress_report>();
      if (refusal) {
        rp.deliver(refusal);
        return rp;
      }
      self->request(self->state.syncer, self->state.cfg.timeout, messages::stats_atom::value)
        .then(
          [=](std::uint64_t rounds) mutable {
            self->state.rounds = rounds;
            rp.deliver(progress_of(self->state, self->clock().now()));
          },
          [=](caf::error&) mutable { rp.deliver(progress_of(self->state, self->clock().now())); });
      return rp;
    },
    [=](messages::peers_atom) -> caf::result<caf::strong_actor_ptr> {
      if (auto e = refused(self, "a request for its syncer"))
        return e;
      return caf::actor_cast<caf::strong_actor_ptr>(self->state.syncer);
    },
    [=](messages::sync_atom) -> caf::typed_response_promise<std::uint64_t> {
      // (before the promise: making it takes the sender over)
      auto refusal = refused(self, "a rounds request");
      auto rp = self->make_response_promise<std::uint64_t>();
      if (refusal) {
        rp.deliver(refusal);
        return rp;
      }
      self->request(self->state.syncer, self->state.cfg.timeout, messages::stats_atom::value)
        .then(
          [=](std::uint64_t rounds) mutable {
            self->state.rounds = rounds;
            rp.deliver(rounds);
          },
          [=](caf::error& err) mutable {
            rp.deliver(messages::make_error(errc::trainer_down, self->state.name + ": syncer: " +
                                                                  self->system().render(err)));
          });
      return rp;
    },
    [=](messages::stop_atom, std::uint64_t last_round)
      -> caf::typed_response_promise<messages::trainer_report> {
      auto& st = self->state;
      // (before the promise: making it takes the sender over)
      auto refusal = refused(self, "stop");
      auto rp = self->make_response_promise<messages::trainer_report>();
      if (refusal) {
        rp.deliver(refusal);
        return rp;
      }
      if (st.stop_promise.pending()) { // keep the first stop's promise
        rp.deliver(messages::make_error(errc::bad_request,
                                        st.name + ": stop while a stop is in progress"));
        return rp;
      }
      if (!st.trained) { // stop before the end of the data: end the workers first
        for (auto& w : st.workers)
          self->send_exit(w, caf::exit_reason::user_shutdown);
        finish_training(self);
      }
      self->send_exit(st.reader, caf::exit_reason::user_shutdown); // no more batches needed
      st.stop_promise = rp;
      self->request(st.syncer, st.cfg.timeout, messages::stop_atom::value, last_round)
        .then(
          [=](messages::sync_stats& s) {
            auto& st = self->state;
            messages::trainer_report r;
            r.trainer = st.cfg.trainer;
            r.work = st.total;
            r.sync = std::move(s);
            r.replica.values = st.replica->snapshot();
            r.state.values = st.replica->state_snapshot();
            st.stop_promise.deliver(std::move(r));
          },
          [=](caf::error& err) {
            fail(self, errc::trainer_down, "syncer stop failed: " + self->system().render(err));
          });
      return rp;
    },
    [=](messages::cut_atom, std::uint64_t id, std::uint64_t last_round)
      -> caf::typed_response_promise<messages::cut_report> {
      // (before the promise: making it takes the sender over)
      auto refusal = refused(self, "a cut");
      auto rp = self->make_response_promise<messages::cut_report>();
      if (refusal) {
        rp.deliver(refusal);
        return rp;
      }
      trainer_cut_detail::on_cut(self, id, last_round, rp);
      return rp;
    },
    [=](messages::workers_atom) -> caf::result<std::vector<caf::strong_actor_ptr>> {
      if (auto e = refused(self, "a request for its workers"))
        return e;
      std::vector<caf::strong_actor_ptr> out;
      for (const auto& w : self->state.workers)
        out.push_back(caf::actor_cast<caf::strong_actor_ptr>(w));
      return out;
    },
    [=](messages::parked_atom, std::uint64_t id) {
      const auto who = caf::actor_cast<caf::actor_addr>(self->current_sender());
      auto& st = self->state;
      for (std::size_t w = 0; w < st.workers.size(); ++w)
        if (who == st.workers[w].address() && st.cut && st.cut->id == id)
          trainer_cut_detail::on_worker_parked(self, w);
    },
    [=](messages::resume_atom) {
      if (!refused(self, "resume"))
        self->send(self->state.syncer, messages::resume_atom::value);
    },
    [=](messages::rebind_atom, std::uint32_t shard, const caf::strong_actor_ptr& h) {
      auto& st = self->state;
      if (refused(self, "a rebind of embedding shard " + std::to_string(shard)))
        return;
      if (shard >= st.cfg.shards.size() || !h) {
        spdlog::warn("{}: rebind of embedding shard {} refused (sent by {}): expected below {} "
                     "(cluster.embedding-shards) and a handle",
                     st.name, shard, peer_name(self->current_sender()), st.cfg.shards.size());
        return;
      }
      st.cfg.shards[shard] = caf::actor_cast<embedding_shard_actor>(h);
      self->monitor(st.cfg.shards[shard]);
      for (auto& w : st.workers)
        self->send(w, messages::rebind_atom::value, shard, h);
    },
  };
}

} // namespace actors
