// The coordinator actor: its behaviour and its phases (see
// coordinator_actor.hpp):
//   coordinator -> trainer: peers, start, stats, sync, stop(last)
//   coordinator -> syncer: peers(rank, all)
//   coordinator -> embedding shard: lookup of no keys (readiness)
//   coordinator -> caller: started, polled, trained (hooks, awaited)
//   (the cuts the polls ask for: coordinator_cuts.cpp)
#include "cluster/coordinator_protocol.hpp"

#include <algorithm>
#include <memory>

#include <spdlog/spdlog.h>

#include "messages/errors.hpp"
#include "cluster/cluster_metrics.hpp"

namespace runtime {

using namespace messages;

namespace {

coordinator_actor::behavior_type coordinator(coordinator_self self, coordinator_setup setup) {
  self->state.protocol = std::make_unique<coordinator_protocol>(self, std::move(setup));
  self->set_down_handler([self](caf::down_msg& dm) { self->state.protocol->on_down_msg(dm); });
  auto& p = *self->state.protocol;
  return {
    [&p](messages::begin_atom) { p.begin(); },
    [&p](messages::poll_atom, std::uint64_t g) { p.on_poll(g); },
    [&p](messages::deadline_atom, std::uint64_t g) { p.on_deadline(g); },
    [&p](messages::finish_atom) { p.on_finish(); },
  };
}

} // namespace

coordinator_actor spawn_coordinator(caf::actor_system& sys, coordinator_setup setup) {
  return sys.spawn(coordinator, std::move(setup));
}

coordinator_protocol::coordinator_protocol(coordinator_self self, coordinator_setup setup)
    : self_(self), setup_(std::move(setup)),
      phases_(setup_.cluster->trainer_names, model::uses_ring(setup_.cfg->sync.algorithm),
              setup_.tolerate_trainer_loss) {}

void coordinator_protocol::begin() {
  monitor_all();
  t0_ = now();
  // 1. The ring: every trainer's syncer.
  ask(coordinator_phase::wire, caf::duration{cfg().cluster.timeout}, syncers_, peers_atom::value);
}

void coordinator_protocol::after_event() {
  if (busy_ || ended_ || cutting())
    return;
  if (phases_.failure()) {
    end();
    return;
  }
  if (wait_ == wait::finishing)
    return;
  if (rollback_) {
    finish_soon();
    return;
  }
  if (wait_ != wait::none || restarting())
    return;
  if (phases_.phase() == coordinator_phase::train)
    arm_poll(); // the coordinator's last message was this one
  if (phases_.complete() && local_done_)
    next_phase();
}

void coordinator_protocol::next_phase() {
  const caf::duration timeout{cfg().cluster.timeout};
  switch (phases_.phase()) {
    case coordinator_phase::wire:
      if (auto w = phases_.first_ring())
        send_ring(*w);
      // Training time starts once every embedding shard has its tables, as
      // the sequential engine's does after its own: on the virtual clock
      // too, where sim.cost=measured charges the shards' initialisation.
      enter(coordinator_phase::shards);
      local_done_ = false;
      ask_shard(0);
      return;
    case coordinator_phase::shards:
      start_training();
      return;
    case coordinator_phase::train:
      seconds_ = since(train_t0_);
      enter(coordinator_phase::drain);
      if (!setup_.on_trained)
        return after_event();
      hook<std::vector<caf::actor_addr>>(
        [this](std::vector<caf::actor_addr>& killed) { drain(std::move(killed)); },
        messages::trained_atom::value);
      return;
    case coordinator_phase::drain:
      // 3. Coordinated stop: every ring member finishes the same last round.
      ask(coordinator_phase::rounds, timeout, rounds_, sync_atom::value);
      return;
    case coordinator_phase::rounds:
      ask(coordinator_phase::stop, timeout, reports_, stop_atom::value,
          phases_.last_round(rounds_));
      return;
    case coordinator_phase::stop:
      enter(coordinator_phase::report);
      end();
      return;
    default:
      SS_CHECK(false, "the coordinator's phase has no next one here");
  }
}

std::vector<std::size_t> coordinator_protocol::advance_to(coordinator_phase p) {
  auto ask = phases_.advance();
  SS_CHECK(phases_.phase() == p, "the coordinator's phases run in their order");
  spdlog::debug("coordinator: phase {}", to_string(p));
  return ask;
}

void coordinator_protocol::enter(coordinator_phase p) {
  SS_CHECK(!asks_trainers(p), "a phase that asks the trainers runs through ask");
  advance_to(p);
}

void coordinator_protocol::on_ask_error(std::size_t i, const caf::error& err) {
  if (over())
    return;
  const auto& name = c().trainer_names[i];
  if (err == caf::sec::request_timeout) {
    phases_.fail("no reply from " + phases_.missing() + " within " +
                 std::to_string(cfg().cluster.timeout.count()) + " ms");
  } else if (setup_.rollback_on_shard_loss) {
    auto why = name + ": " + self_->system().render(err);
    if (errc_of(err, errc::none) == errc::shard_down && await_shard_down(why))
      return;
    note_loss(std::move(why), std::nullopt);
  } else {
    auto why = name + ": " + self_->system().render(err);
    if (errc_of(err, errc::none) == errc::shard_down) {
      // The shard's own DOWN (or its node's) names the cause. Which of the
      // two reports comes first is a race (with direct links between nodes,
      // the trainer's node often sees the shard's node die before the
      // coordinator does).
      wait_ = wait::shard_down;
      wait_error_ = std::move(why);
      arm_deadline(cfg().cluster.timeout);
      return;
    }
    phases_.fail(std::move(why));
  }
  after_event();
}

void coordinator_protocol::ask_shard(std::size_t s) {
  if (s == c().shards.size()) {
    local_done_ = true;
    return after_event();
  }
  self_->request(c().shards[s], cfg().cluster.timeout, lookup_atom::value, lookup_request{})
    .then([this, s](embedding_rows&) { if (!over()) ask_shard(s + 1); },
          [this, s](caf::error& e) {
            if (over())
              return;
            phases_.fail(c().shard_names[s] + " did not answer a readiness lookup: " +
                         self_->system().render(e));
            after_event();
          });
}

void coordinator_protocol::start_training() {
  // 2. Training: the caller's zero first (the fault injector's, the cuts'
  // syncers), then every trainer's start.
  train_t0_ = now();
  const auto t0_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       train_t0_.time_since_epoch()).count();
  hook<>(
    [this] {
      ask(coordinator_phase::train, caf::infinite, done_, start_atom::value);
    },
    messages::started_atom::value, std::int64_t(t0_ns), syncers_);
}

void coordinator_protocol::arm_poll() {
  self_->delayed_send(self_, setup_.poll_interval, messages::poll_atom::value, ++poll_gen_);
}

void coordinator_protocol::on_poll(std::uint64_t g) {
  if (g != poll_gen_ || over() || restarting() || phases_.phase() != coordinator_phase::train)
    return;
  if (cutting()) {
    if (setup_.poll_in_cuts)
      poll_quietly();
    return;
  }
  if (busy_)
    return;
  busy_ = true;
  poll_from(0, progress_report{});
}

std::chrono::milliseconds coordinator_protocol::poll_timeout() const {
  // Progress is best effort: a short timeout, so a frozen trainer
  // (multi-node: until the heartbeats declare its node down) does not stall.
  return std::min(cfg().cluster.timeout, std::chrono::milliseconds(1000));
}

void coordinator_protocol::poll_quietly() {
  // Not awaited (the cut's messages and the DOWNs go on meanwhile: a trainer
  // whose node died answers only at the timeout); the count only grows, as
  // the examples the job has trained do, a lost trainer's included.
  struct tally {
    std::size_t left = 0;
    std::uint64_t examples = 0;
  };
  auto t = std::make_shared<tally>();
  const auto& alive = phases_.alive();
  t->left = static_cast<std::size_t>(std::count(alive.begin(), alive.end(), true));
  if (t->left == 0)
    return;
  auto answered = [this, t] {
    if (--t->left > 0 || ended_)
      return;
    last_examples_ = std::max(last_examples_, t->examples);
    if (cutting() && !over())
      arm_poll();
  };
  for (std::size_t i = 0; i < alive.size(); ++i)
    if (alive[i])
      self_->request(c().trainers[i], poll_timeout(), stats_atom::value)
        .then([t, answered](progress_report& p) { t->examples += p.examples; answered(); },
              [answered](caf::error&) { answered(); });
}

void coordinator_protocol::poll_from(std::size_t i, progress_report total) {
  const auto& alive = phases_.alive();
  while (i < alive.size() && !alive[i])
    ++i;
  if (i == alive.size()) {
    last_examples_ = total.examples;
    busy_ = false;
    hook<std::string, bool>(
      [this](std::string& e, bool cut) {
        if (!e.empty())
          hook_failed(std::move(e));
        else if (cut)
          start_cut();
      },
      messages::polled_atom::value, total);
    return;
  }
  self_->request(c().trainers[i], poll_timeout(), stats_atom::value)
    .await([this, i, total](progress_report& p) mutable {
             add_progress(total, p);
             poll_from(i + 1, total);
           },
           [this, i, total](caf::error&) { poll_from(i + 1, total); });
}

void coordinator_protocol::drain(std::vector<caf::actor_addr> killed) {
  awaited_ = std::move(killed);
  if (drained())
    return;
  wait_ = wait::downs;
  local_done_ = false;
  arm_deadline(cfg().cluster.timeout);
}

void coordinator_protocol::arm_deadline(std::chrono::milliseconds d) {
  self_->delayed_send(self_, d, messages::deadline_atom::value, ++wait_gen_);
}

void coordinator_protocol::on_deadline(std::uint64_t g) {
  if (g != wait_gen_ || ended_)
    return;
  const auto timeout = std::to_string(cfg().cluster.timeout.count());
  if (wait_ == wait::downs) {
    wait_ = wait::none;
    phases_.fail("a killed role sent no DOWN within " + timeout + " ms");
  } else if (wait_ == wait::shard_down) {
    wait_ = wait::none;
    for (const auto& dm : later_)
      if (!phases_.failure())
        on_down(dm);
    later_.clear();
    if (setup_.rollback_on_shard_loss)
      note_loss(std::move(wait_error_), std::nullopt); // (a shard's DOWN replaces it)
    else
      phases_.fail(std::move(wait_error_));
  }
  after_event();
}

bool coordinator_protocol::await_shard_down(std::string why) {
  if (rollback_ && rollback_->shard)
    return false; // the cause is known
  if (wait_ != wait::shard_down) {
    wait_ = wait::shard_down;
    wait_error_ = std::move(why);
    arm_deadline(cfg().cluster.timeout);
  }
  return true;
}

void coordinator_protocol::hook_failed(std::string e) {
  if (setup_.rollback_on_shard_loss) { // a cut that failed with the loss
    pending_loss_ = std::move(e);
    finish_soon();
  } else {
    phases_.fail(std::move(e));
  }
}

void coordinator_protocol::end() {
  ended_ = true;
  if (auto cut = std::move(cut_)) // (its end reports to no one now)
    cut->abort("the coordinator ended first");
  coordinator_outcome o;
  o.failure = phases_.failure();
  o.rollback = rollback_;
  o.alive = phases_.alive();
  o.lost = phases_.lost();
  o.reports = std::move(reports_);
  o.seconds = seconds_;
  caf::anon_send(setup_.caller, std::move(o));
  self_->quit();
}

} // namespace runtime
