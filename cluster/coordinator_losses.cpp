// The coordinator actor's losses (see coordinator_actor.hpp):
//   coordinator -> syncer: peers(generation, rank, survivors) (ring re-form)
//   (a shard restarted under partial recovery: coordinator_restarts.cpp)
//   coordinator -> itself: finish (rollback, after the DOWNs in hand)
#include "cluster/coordinator_protocol.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "actors/interfaces.hpp"
#include "messages/errors.hpp"

namespace runtime {

namespace {

template <class Handles>
std::size_t index_of(const Handles& hs, const caf::actor_addr& a) {
  for (std::size_t i = 0; i < hs.size(); ++i)
    if (hs[i].address() == a)
      return i;
  return hs.size();
}

} // namespace

void coordinator_protocol::monitor(const caf::actor_addr& a) {
  if (!a || std::find(monitored_.begin(), monitored_.end(), a) != monitored_.end())
    return;
  monitored_.push_back(a);
  self_->monitor(caf::actor_cast<caf::actor>(a));
}

void coordinator_protocol::monitor_all() {
  for (auto& t : c().trainers)
    monitor(t.address());
  for (auto& s : c().shards)
    monitor(s.address());
  for (auto& d : c().dense)
    monitor(d.address());
  for (auto& n : c().nodes)
    monitor(n.agent);
}

void coordinator_protocol::on_down_msg(caf::down_msg& dm) {
  if (ended_)
    return;
  if (cut_ && setup_.restart_shards && !setup_.rollback_on_shard_loss &&
      index_of(c().shards, dm.source) < c().shards.size()) {
    // Partial recovery: the shard is restarted now; the cut goes on without
    // it, ends void and is taken again once the shard is back
    // (coordinator_cuts.cpp).
    const auto s = index_of(c().shards, dm.source);
    const auto why = describe(dm);
    auto run = cut_;
    take_down(dm);
    run->lose_shard(s, why);
    after_event();
    return;
  }
  if (cut_) {
    // A DOWN during a cut: the cut ends now (a shard that died holding its
    // request would never answer); the DOWN is handled once it has.
    const auto why = describe(dm);
    cut_downs_.push_back(std::move(dm));
    auto run = cut_; // (its end resets cut_)
    run->abort(why);
    return;
  }
  take_down(dm);
  after_event();
}

void coordinator_protocol::take_down(caf::down_msg& dm) {
  if (wait_ == wait::shard_down) {
    // Only a shard's or an essential node's DOWN can name the cause; the
    // others (trainers and their nodes) are handled after.
    if (!names_cause(dm)) {
      later_.push_back(std::move(dm));
      return;
    }
    on_down(dm);
    if (phases_.failure())
      later_.clear();
    return;
  }
  on_down(dm);
  if (wait_ == wait::downs && drained()) {
    wait_ = wait::none;
    local_done_ = true;
    ++wait_gen_; // the deadline is void
  }
}

std::string coordinator_protocol::describe(const caf::down_msg& dm) const {
  const auto why = self_->system().render(dm.reason);
  const auto& k = c();
  if (auto i = index_of(k.shards, dm.source); i < k.shards.size())
    return k.shard_names[i] + " is down (" + why + ")";
  if (auto i = index_of(k.dense, dm.source); i < k.dense.size())
    return k.dense_names[i] + " is down (" + why + ")";
  if (auto i = index_of(k.trainers, dm.source); i < k.trainers.size())
    return k.trainer_names[i] + " is down (" + why + ")";
  for (const auto& n : k.nodes)
    if (n.agent == dm.source)
      return n.name + " is down (" + why + ")";
  return "an actor it monitors is down (" + why + ")";
}

bool coordinator_protocol::names_cause(const caf::down_msg& dm) const {
  if (index_of(c().shards, dm.source) < c().shards.size() ||
      index_of(c().dense, dm.source) < c().dense.size())
    return true;
  for (const auto& n : c().nodes)
    if (n.agent == dm.source)
      return n.essential;
  return false;
}

bool coordinator_protocol::survivable(const caf::down_msg& dm) const {
  if (setup_.rollback_on_shard_loss || !setup_.tolerate_trainer_loss)
    return false;
  if (index_of(c().trainers, dm.source) < c().trainers.size()) // (not for a shard it lost)
    return messages::errc_of(dm.reason, messages::errc::none) != messages::errc::shard_down;
  for (const auto& n : c().nodes)
    if (n.agent == dm.source)
      return !n.essential;
  return false;
}

bool coordinator_protocol::drained() const {
  return std::all_of(awaited_.begin(), awaited_.end(), [&](const caf::actor_addr& a) {
    return std::find(downs_.begin(), downs_.end(), a) != downs_.end();
  });
}

void coordinator_protocol::on_down(const caf::down_msg& dm) {
  downs_.push_back(dm.source);
  const auto why = self_->system().render(dm.reason);
  const auto& k = c();
  if (setup_.rollback_on_shard_loss) {
    if (auto i = index_of(k.shards, dm.source); i < k.shards.size())
      note_loss(k.shard_names[i] + " is down (" + why + ")", i);
    else if (auto j = index_of(k.trainers, dm.source); j < k.trainers.size()) {
      auto what = k.trainer_names[j] + " is down (" + why + ")";
      if (messages::errc_of(dm.reason, messages::errc::none) != messages::errc::shard_down ||
          !await_shard_down(what))
        note_loss(std::move(what), std::nullopt);
    }
    else if (auto d = index_of(k.dense, dm.source); d < k.dense.size())
      note_loss(k.dense_names[d] + " is down (" + why + ")", std::nullopt);
    return;
  }
  if (auto i = index_of(k.shards, dm.source); i < k.shards.size()) {
    if (!setup_.restart_shards) {
      phases_.fail(k.shard_names[i] + " is down (" + why + ")");
      return;
    }
    restart(i, why);
    return;
  }
  if (auto i = index_of(k.dense, dm.source); i < k.dense.size()) {
    phases_.fail(k.dense_names[i] + " is down (" + why + ")");
    return;
  }
  if (auto i = index_of(k.trainers, dm.source); i < k.trainers.size()) {
    lose_trainer(i, why);
    return;
  }
  for (const auto& n : k.nodes)
    if (n.agent == dm.source) {
      if (n.essential) {
        phases_.fail(n.name + " is down (" + why + ")");
        return;
      }
      for (auto t : n.trainers)
        lose_trainer(t, n.name + " down: " + why);
      return;
    }
}

void coordinator_protocol::lose_trainer(std::size_t i, const std::string& why) {
  const auto lost = phases_.lost().size();
  auto ring = phases_.lose_trainer(i, why, since(t0_));
  if (phases_.lost().size() > lost)
    spdlog::warn("{}: removed from the job; {} trainer(s) left", phases_.lost().back(),
                 phases_.survivors());
  if (cfg().checkpoint.enabled() && phases_.lost().size() > lost) {
    // The next cuts hold its part as at the newest cut before (a stand-in:
    // cluster_checkpointer::stand_in), so a resume brings it back from there.
    const auto newest = setup_.checkpoints ? setup_.checkpoints->newest() : std::string{};
    spdlog::warn("checkpoint: the cuts from now on hold {}'s part as at {}: a resume with "
                 "cluster.trainers={} trains it again from there",
                 c().trainer_names[i], newest.empty() ? std::string("this run's start") : newest,
                 c().trainers.size());
  }
  if (ring)
    send_ring(*ring);
}

void coordinator_protocol::note_loss(const std::string& why, std::optional<std::size_t> shard) {
  if (rollback_ && (rollback_->shard || !shard))
    return;
  rollback_ = shard_loss{shard, why, rollback_ ? rollback_->seconds : since(t0_), last_examples_};
}

void coordinator_protocol::finish_soon() {
  if (wait_ == wait::finishing)
    return;
  wait_ = wait::finishing;
  self_->send(self_, messages::finish_atom::value);
}

void coordinator_protocol::on_finish() {
  if (ended_)
    return;
  if (pending_loss_ && !rollback_)
    note_loss(*pending_loss_, std::nullopt);
  end();
}

void coordinator_protocol::send_ring(const ring_wiring& w) {
  std::vector<caf::strong_actor_ptr> members;
  for (auto t : w.members)
    members.push_back(syncers_[t]);
  for (std::size_t r = 0; r < members.size(); ++r) {
    auto syncer = caf::actor_cast<actors::syncer_actor>(members[r]);
    if (w.generation == 0)
      self_->send(syncer, messages::peers_atom::value, std::uint32_t(r), members);
    else
      self_->send(syncer, messages::peers_atom::value, w.generation, std::uint32_t(r), members);
  }
  if (w.generation > 0)
    spdlog::warn("ring re-formed with {} syncer(s) (generation {})", members.size(),
                 w.generation);
}

} // namespace runtime
