// Message flow:
//   trainer/coordinator -> syncer: peers, start, end, stop, stats
//   worker -> syncer: sync (FR); syncer -> worker: round number
//   syncer -> dense shard: exchange(range); shard -> syncer: d      (EASGD)
//   syncer -> next syncer: ring(chunk)                               (MA / BMUF)
//   syncer -> syncer: tick (after min_pause)
#include "actors/shadow_syncer.hpp"
#include "actors/work.hpp"

#include <algorithm>
#include <cstring>

#include <caf/actor_system.hpp>
#include <caf/sec.hpp>
#include <spdlog/spdlog.h>

#include "messages/errors.hpp"

namespace actors {

using messages::errc;
using messages::make_error;

std::string syncer_state::who() const {
  return std::string{name} + " " + std::to_string(cfg.trainer);
}

caf::error syncer_state::init() {
  const auto& r = cfg.replica;
  if (!r)
    return make_error(errc::bad_request, who() + ": no replica");
  if (model::is_easgd(cfg.algorithm)) {
    if (cfg.dense_shards.size() != cfg.dense_ranges.size())
      return make_error(errc::bad_request, who() + ": dense shards and ranges differ in number");
    for (const auto& x : cfg.dense_ranges)
      if (x.offset + x.size > r->size())
        return make_error(errc::bad_request, who() + ": dense range beyond the replica");
    for (const auto& s : cfg.dense_shards)
      self->monitor(s);
    if (cfg.dct.dp && !cfg.dct_origin.empty() && cfg.dct_origin.size() != r->size())
      return make_error(errc::bad_request, who() + ": the DCT origin has the wrong size");
    if (cfg.dct.dp)
      for (std::size_t i = 0; i < cfg.dense_ranges.size(); ++i)
        easgd.senders.emplace_back(cfg.dct, cfg.dense_ranges[i].size,
                         (std::uint64_t{cfg.trainer} << 32) | i,
                         cfg.dct_origin.empty() ? nullptr
                                                : cfg.dct_origin.data() + cfg.dense_ranges[i].offset,
                         cfg.dense_ranges[i].offset);
  } else if (cfg.dct.dp && !ring_method()) {
    return make_error(errc::bad_request, who() + ": dct.dp is built for EASGD, MA and BMUF");
  }
  if (ring_method()) {
    snapshot.resize(r->size());
    reduced.resize(r->size());
    if (cfg.num_trainers <= 1)
      ring = std::make_unique<ring_allreduce>(0, 1, nullptr);
    if (dct_ring())
      if (auto err = init_dct_ring())
        return err;
  }
  if (model::is_bmuf(cfg.algorithm)) {
    bmuf.global = cfg.initial.empty() ? r->snapshot() : std::move(cfg.initial);
    if (bmuf.global.size() != r->size())
      return make_error(errc::bad_request, who() + ": BMUF initial w_g has the wrong size");
    if (cfg.initial_momentum.empty())
      bmuf.momentum.assign(r->size(), 0.0f);
    else if (cfg.initial_momentum.size() == r->size())
      bmuf.momentum = std::move(cfg.initial_momentum);
    else
      return make_error(errc::bad_request, who() + ": BMUF initial Delta has the wrong size");
    bmuf.block_start = bmuf.global;
  }
  return {};
}

void syncer_state::on_start() {
  if (phase == syncer_phase::created)
    phase = syncer_phase::running;
}

void syncer_state::on_end() {
  if (phase == syncer_phase::created || phase == syncer_phase::running)
    phase = syncer_phase::ended;
}

syncer_view syncer_state::view() const {
  syncer_view v;
  v.family = cfg.algorithm == model::sync_algorithm::none ? sync_family::none
             : ring_method()                                ? sync_family::ring
             : model::is_easgd(cfg.algorithm)               ? sync_family::easgd
                                                            : sync_family::none;
  v.foreground = model::is_foreground(cfg.algorithm);
  v.phase = phase;
  v.round = round;
  auto end_of = [&](const std::optional<std::uint64_t>& after) {
    if (!after)
      return ending::none;
    return ring_rounds() < *after ? ending::rounds_left : ending::due;
  };
  v.stop = end_of(stop_after);
  v.hold = end_of(hold_after);
  v.pause_due = pause_due;
  v.workers_waiting = !waiting_next.empty();
  v.has_peers = peers.size() > 1;
  v.has_min_pause = cfg.min_pause.count() > 0;
  v.gap_short = cfg.min_gap_batches > 0 && cfg.replica &&
                cfg.replica->batches.load(std::memory_order_relaxed) <
                  batches_at_start + cfg.min_gap_batches;
  return v;
}

// What to do next is syncer_policy.hpp's decision; this carries it out.
void syncer_state::advance() {
  // A wait for the replica's batch (rule 6) is decided again on every event.
  if (awaiting_batch) {
    awaiting_batch = false;
    cfg.replica->cancel_wake();
    round = round_phase::idle;
  }
  const auto step = next_step(view());
  switch (step) {
    case syncer_step::finish_stop:
      finish_stop();
      break;
    case syncer_step::finish_hold:
      finish_hold();
      break;
    case syncer_step::pause: // shadow: the optional pause between rounds
    case syncer_step::pace:  // look again in 1 ms (a ring member serving after the end)
      round = round_phase::timer;
      self->delayed_send(self,
                         step == syncer_step::pause ? cfg.min_pause : std::chrono::milliseconds(1),
                         messages::tick_atom::value);
      break;
    case syncer_step::await_batch: { // the worker whose batch completes the gap wakes it
      round = round_phase::timer;
      awaiting_batch = true;
      auto& rep = *cfg.replica;
      rep.want_wake_at(batches_at_start + std::uint64_t(cfg.min_gap_batches));
      // A batch that ended between the view and the wish saw no wish: claim it here.
      if (rep.claim_wake(rep.batches.load(std::memory_order_seq_cst)))
        self->send(self, messages::wake_atom::value);
      break;
    }
    case syncer_step::start_round:
      start_round();
      break;
    case syncer_step::wait:
      break;
  }
}

void syncer_state::start_round() {
  round = round_phase::in_round;
  count(work::snapshot, double(cfg.replica->size()));
  batches_at_start = cfg.replica->batches.load(std::memory_order_relaxed);
  pause_due = false;
  waiting_current = std::move(waiting_next);
  waiting_next.clear();
  round_start = self->clock().now();
  if (model::is_easgd(cfg.algorithm))
    start_easgd();
  else
    start_ring();
}

void syncer_state::finish_round() {
  count(work::merge, double(cfg.replica->size()));
  round = round_phase::idle;
  pause_due = true;
  ++stats.rounds;
  stats.seconds +=
    std::chrono::duration<double>(self->clock().now() - round_start).count();
  // The sync gap covers rounds while the trainer trains; rounds run after its
  // end only serve the other trainers.
  if (!free_running())
    stats.batches_at_round.push_back(cfg.replica->batches.load(std::memory_order_relaxed));
  for (auto& p : waiting_current)
    p.deliver(stats.rounds);
  waiting_current.clear();
  advance();
}

void syncer_state::on_sync(promise p) {
  waiting_next.push_back(std::move(p));
  advance();
}

namespace {

// A message from a sender without the authority for it (actors/authority.hpp):
// directing ones from this process or the coordinator's node, ring steps
// (`data`) also from a trainer's node. Logged, no effect.
caf::error refused(syncer_actor::stateful_pointer<syncer_state> self, const char* what,
                   bool data = false) {
  const auto& s = self->current_sender();
  const auto& who = self->state.cfg.who;
  if (data ? who.data_plane(s, self->node()) : who.directs(s, self->node()))
    return {};
  return refuse_sender("syncer-" + std::to_string(self->state.cfg.trainer), what, s,
                       data ? data_plane_only : directors_only);
}

} // namespace

syncer_actor::behavior_type shadow_syncer(syncer_actor::stateful_pointer<syncer_state> self,
                                          syncer_config cfg) {
  using namespace messages;
  auto& st = self->state;
  st.self = self;
  st.cfg = std::move(cfg);
  self->set_down_handler([self](caf::down_msg& dm) { self->state.on_down(dm); });
  if (auto err = st.init())
    st.fail(std::move(err));
  return {
    [self](peers_atom, std::uint32_t rank, std::vector<caf::strong_actor_ptr>& all) {
      if (refused(self, "its ring peers"))
        return;
      if (auto err = self->state.set_peers(rank, all))
        self->state.fail(std::move(err));
      else
        self->state.advance();
    },
    [self](peers_atom, std::uint32_t gen, std::uint32_t rank,
           std::vector<caf::strong_actor_ptr>& survivors) {
      if (refused(self, "a ring re-form"))
        return;
      if (auto err = self->state.reform(gen, rank, survivors))
        self->state.fail(std::move(err));
      else
        self->state.advance();
    },
    [self](start_atom) {
      if (refused(self, "start"))
        return;
      self->state.on_start();
      self->state.advance();
    },
    [self](ring_atom, ring_chunk& chunk) {
      if (!refused(self, "a ring step", true))
        self->state.on_ring(std::move(chunk));
    },
    [self](ring_atom, ring_sparse& piece) {
      if (!refused(self, "a ring step", true))
        self->state.on_ring_sparse(std::move(piece));
    },
    [self](sync_atom) -> caf::result<std::uint64_t> {
      auto& st = self->state;
      if (auto e = refused(self, "a round request"))
        return e;
      if (st.cfg.algorithm == model::sync_algorithm::none || st.stopped())
        return st.stats.rounds;
      auto p = self->make_response_promise<std::uint64_t>();
      st.on_sync(p);
      return p;
    },
    [self](end_atom) {
      if (refused(self, "its trainer's end"))
        return;
      self->state.on_end();
      self->state.advance();
    },
    [self](stats_atom) -> caf::result<std::uint64_t> {
      if (auto e = refused(self, "a rounds request"))
        return e;
      return self->state.ring_rounds();
    },
    [self](stop_atom, std::uint64_t last_round) -> caf::result<sync_stats> {
      auto& st = self->state;
      if (auto e = refused(self, "stop"))
        return e;
      if (st.stopped())
        return st.stats;
      auto p = self->make_response_promise<sync_stats>();
      st.stop_promises.push_back(p);
      st.on_stop(last_round);
      return p;
    },
    [self](wake_atom) {
      if (!refused(self, "a pacing wake-up"))
        self->state.advance();
    },
    [self](tick_atom) {
      if (refused(self, "a pause tick"))
        return;
      auto& st = self->state;
      if (st.round == round_phase::timer)
        st.round = round_phase::idle;
      st.pause_due = false;
      self->state.advance();
    },
    [self](hold_atom, std::uint64_t last_round) -> caf::result<sync_hold> {
      if (auto e = refused(self, "a hold"))
        return e;
      auto p = self->make_response_promise<sync_hold>();
      self->state.on_hold(last_round, p);
      return p;
    },
    [self](aim_atom, std::uint64_t last_round) -> caf::result<std::uint64_t> {
      if (auto e = refused(self, "an aim"))
        return e;
      return self->state.on_aim(last_round);
    },
    [self](resume_atom) {
      if (!refused(self, "resume"))
        self->state.on_resume();
    },
  };
}

} // namespace actors
