// The coordinator's bookkeeping of live roles and losses (see
// coordinator_run.hpp).
#include "runtime/coordinator_run.hpp"

#include <algorithm>
#include <cstdio>

#include <spdlog/spdlog.h>

namespace runtime {

using namespace actors;

void coordinator_run::note_loss(const std::string& why, std::optional<std::size_t> shard) {
  if (rollback && (rollback->shard || !shard))
    return;
  const double at = std::chrono::duration<double>(self_->clock().now() - t0_).count();
  rollback = shard_loss{shard, why, rollback ? rollback->seconds : at, last_examples};
}

void coordinator_run::take_downs() {
  bool more = true;
  while (more)
    self_->receive([&](caf::down_msg& dm) { on_down(dm); },
                   caf::after(std::chrono::milliseconds(0)) >> [&] { more = false; });
}

void coordinator_run::await_downs(const std::vector<caf::actor_addr>& roles,
                                  std::chrono::milliseconds timeout) {
  auto missing = [&] {
    return std::any_of(roles.begin(), roles.end(), [&](const caf::actor_addr& a) {
      return std::find(downs_.begin(), downs_.end(), a) == downs_.end();
    });
  };
  const auto deadline = self_->clock().now() + timeout;
  while (!ended() && missing())
    self_->receive([&](caf::down_msg& dm) { on_down(dm); },
                   caf::after(opts_.poll_interval) >> [&] {
                     if (self_->clock().now() > deadline)
                       phases.fail("a killed role sent no DOWN within " +
                                   std::to_string(timeout.count()) + " ms");
                   });
}

void coordinator_run::await_shard_down() {
  // Only a shard's or an essential node's DOWN can name the cause; trainers
  // (and their nodes) going down meanwhile are handled after.
  auto cause = [&](const caf::down_msg& dm) {
    if (index_of(c_.shards, dm.source) < c_.shards.size() ||
        index_of(c_.dense, dm.source) < c_.dense.size())
      return true;
    for (const auto& n : c_.nodes)
      if (n.agent == dm.source)
        return n.essential;
    return false;
  };
  std::vector<caf::down_msg> later;
  const auto deadline = self_->clock().now() + cfg_.cluster.timeout;
  bool waiting = true;
  while (waiting && !ended())
    self_->receive(
      [&](caf::down_msg& dm) {
        if (cause(dm))
          on_down(dm);
        else
          later.push_back(std::move(dm));
      },
      caf::after(opts_.poll_interval) >> [&] { waiting = self_->clock().now() <= deadline; });
  for (const auto& dm : later)
    if (!phases.failure())
      on_down(dm);
}

void coordinator_run::monitor_all() {
  for (auto& t : c_.trainers)
    self_->monitor(t);
  for (auto& s : c_.shards)
    self_->monitor(s);
  for (auto& d : c_.dense)
    self_->monitor(d);
  for (auto& n : c_.nodes)
    self_->monitor(caf::actor_cast<caf::actor>(n.agent));
  t0_ = self_->clock().now();
}

void coordinator_run::await_shards(std::chrono::milliseconds timeout) {
  for (std::size_t i = 0; i < c_.shards.size() && !phases.failure(); ++i)
    self_->request(c_.shards[i], timeout, lookup_atom::value, messages::lookup_request{})
      .receive([](messages::embedding_rows&) {},
               [&](caf::error& err) {
                 phases.fail(c_.shard_names[i] + " did not answer a readiness lookup: " +
                             self_->system().render(err));
               });
}

void coordinator_run::enter(coordinator_phase p) {
  SS_CHECK(!asks_trainers(p), "a phase that asks the trainers runs through ask_all");
  advance_to(p);
}

std::vector<std::size_t> coordinator_run::advance_to(coordinator_phase p) {
  auto ask = phases.advance();
  SS_CHECK(phases.phase() == p, "the coordinator's phases run in their order");
  spdlog::debug("coordinator: phase {}", to_string(p));
  return ask;
}

void coordinator_run::wire_ring(const std::vector<caf::strong_actor_ptr>& syncers) {
  syncers_ = syncers;
  if (auto w = phases.first_ring())
    send_ring(*w);
}

void coordinator_run::send_ring(const ring_wiring& w) {
  std::vector<caf::strong_actor_ptr> members;
  for (auto t : w.members)
    members.push_back(syncers_[t]);
  for (std::size_t r = 0; r < members.size(); ++r) {
    auto syncer = caf::actor_cast<syncer_actor>(members[r]);
    if (w.generation == 0)
      self_->send(syncer, peers_atom::value, std::uint32_t(r), members);
    else
      self_->send(syncer, peers_atom::value, w.generation, std::uint32_t(r), members);
  }
  if (w.generation > 0)
    spdlog::warn("ring re-formed with {} syncer(s) (generation {})", members.size(),
                 w.generation);
}

std::size_t coordinator_run::trainer_index(const caf::strong_actor_ptr& who) const {
  for (std::size_t i = 0; i < c_.trainers.size(); ++i)
    if (caf::actor_cast<caf::strong_actor_ptr>(c_.trainers[i]) == who)
      return i;
  return c_.trainers.size();
}

void coordinator_run::on_down(const caf::down_msg& dm) {
  downs_.push_back(dm.source);
  const auto why = self_->system().render(dm.reason);
  if (opts_.rollback_on_shard_loss) {
    if (auto i = index_of(c_.shards, dm.source); i < c_.shards.size())
      note_loss(c_.shard_names[i] + " is down (" + why + ")", i);
    else if (auto j = index_of(c_.trainers, dm.source); j < c_.trainers.size())
      note_loss(c_.trainer_names[j] + " is down (" + why + ")", std::nullopt);
    else if (auto k = index_of(c_.dense, dm.source); k < c_.dense.size())
      note_loss(c_.dense_names[k] + " is down (" + why + ")", std::nullopt);
    return;
  }
  if (auto i = index_of(c_.shards, dm.source); i < c_.shards.size()) {
    if (!recovery.enabled())
      phases.fail(c_.shard_names[i] + " is down (" + why + ")");
    else if (auto e = recovery.recover(i, why, phases.alive()))
      phases.fail(std::move(*e));
    return;
  }
  if (auto i = index_of(c_.dense, dm.source); i < c_.dense.size()) {
    phases.fail(c_.dense_names[i] + " is down (" + why + ")");
    return;
  }
  if (auto i = index_of(c_.trainers, dm.source); i < c_.trainers.size()) {
    lose_trainer(i, why);
    return;
  }
  for (const auto& n : c_.nodes)
    if (n.agent == dm.source) {
      if (n.essential) {
        phases.fail(n.name + " is down (" + why + ")");
        return;
      }
      for (auto t : n.trainers)
        lose_trainer(t, n.name + " down: " + why);
      return;
    }
}

void coordinator_run::lose_trainer(std::size_t i, const std::string& why) {
  const auto lost = phases.lost().size();
  const double at = std::chrono::duration<double>(self_->clock().now() - t0_).count();
  auto ring = phases.lose_trainer(i, why, at);
  if (phases.lost().size() > lost)
    spdlog::warn("{}: removed from the job; {} trainer(s) left", phases.lost().back(),
                 phases.survivors());
  if (ring)
    send_ring(*ring);
}

} // namespace runtime
