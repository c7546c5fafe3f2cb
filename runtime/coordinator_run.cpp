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
                       failure = "a killed role sent no DOWN within " +
                                 std::to_string(timeout.count()) + " ms";
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
  while (waiting && !failure && !rollback)
    self_->receive(
      [&](caf::down_msg& dm) {
        if (cause(dm))
          on_down(dm);
        else
          later.push_back(std::move(dm));
      },
      caf::after(opts_.poll_interval) >> [&] { waiting = self_->clock().now() <= deadline; });
  for (const auto& dm : later)
    if (!failure)
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
  for (std::size_t i = 0; i < c_.shards.size() && !failure; ++i)
    self_->request(c_.shards[i], timeout, lookup_atom::value, messages::lookup_request{})
      .receive([](messages::embedding_rows&) {},
               [&](caf::error& err) {
                 failure = c_.shard_names[i] + " did not answer a readiness lookup: " +
                           self_->system().render(err);
               });
}

void coordinator_run::wire_ring(const std::vector<caf::strong_actor_ptr>& syncers) {
  syncers_ = syncers;
  if (!model::uses_ring(cfg_.sync.algorithm))
    return;
  for (std::size_t i = 0; i < syncers_.size(); ++i)
    self_->send(caf::actor_cast<syncer_actor>(syncers_[i]), peers_atom::value,
                std::uint32_t(i), syncers_);
}

std::string coordinator_run::missing() const {
  std::string out;
  for (std::size_t i = 0; i < alive_.size(); ++i)
    if (alive_[i] && !got_[i])
      out += (out.empty() ? "" : ", ") + c_.trainer_names[i];
  return out;
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
    if (recovery.enabled())
      failure = recovery.recover(i, why, alive_);
    else
      failure = c_.shard_names[i] + " is down (" + why + ")";
    return;
  }
  if (auto i = index_of(c_.dense, dm.source); i < c_.dense.size()) {
    failure = c_.dense_names[i] + " is down (" + why + ")";
    return;
  }
  if (auto i = index_of(c_.trainers, dm.source); i < c_.trainers.size()) {
    lose_trainer(i, why);
    return;
  }
  for (const auto& n : c_.nodes)
    if (n.agent == dm.source) {
      if (n.essential) {
        failure = n.name + " is down (" + why + ")";
        return;
      }
      for (auto t : n.trainers)
        lose_trainer(t, n.name + " down: " + why);
      return;
    }
}

void coordinator_run::lose_trainer(std::size_t i, const std::string& why) {
  if (!alive_[i])
    return;
  if (!opts_.tolerate_trainer_loss) {
    failure = c_.trainer_names[i] + " is down (" + why + ")";
    return;
  }
  if (stopping) {
    failure = c_.trainer_names[i] + " went down during the coordinated stop (" + why + ")";
    return;
  }
  alive_[i] = false;
  const double at = std::chrono::duration<double>(self_->clock().now() - t0_).count();
  char when[32];
  std::snprintf(when, sizeof when, "%.1f", at);
  lost.push_back(c_.trainer_names[i] + " lost after " + when + " s (" + why + ")");
  spdlog::warn("{}: removed from the job; {} trainer(s) left", lost.back(), survivors());
  if (survivors() == 0) {
    failure = "every trainer was lost";
    return;
  }
  reform_ring();
}

std::size_t coordinator_run::survivors() const {
  std::size_t n = 0;
  for (bool a : alive_)
    n += a;
  return n;
}

void coordinator_run::reform_ring() {
  if (!model::uses_ring(cfg_.sync.algorithm) || syncers_.empty())
    return; // EASGD: the dense shards simply lose a client
  ++generation_;
  std::vector<caf::strong_actor_ptr> live;
  for (std::size_t i = 0; i < alive_.size(); ++i)
    if (alive_[i])
      live.push_back(syncers_[i]);
  for (std::size_t r = 0; r < live.size(); ++r)
    self_->send(caf::actor_cast<syncer_actor>(live[r]), peers_atom::value, generation_,
                std::uint32_t(r), live);
  spdlog::warn("ring re-formed with {} syncer(s) (generation {})", live.size(), generation_);
}

std::size_t coordinator_run::pending() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < alive_.size(); ++i)
    n += alive_[i] && !got_[i];
  return n;
}

} // namespace runtime
