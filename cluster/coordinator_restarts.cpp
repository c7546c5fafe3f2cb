// The coordinator actor's shard restarts (partial recovery; see
// shard_recovery.hpp and coordinator_actor.hpp, "Losses"):
//   coordinator -> caller: restart(shard, why) (awaited: the new shard in place)
//   coordinator -> new shard: recover (a continuation)
//   coordinator -> caller: restarted(shard, shard_restart) (the report's event)
//   coordinator -> trainer: rebind(shard, handle)
#include "cluster/coordinator_protocol.hpp"

#include "cluster/shard_recovery.hpp"

namespace runtime {

namespace {

std::int64_t ns_of(caf::actor_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

} // namespace

void coordinator_protocol::restart(std::size_t i, const std::string& why) {
  const auto down = now();
  ++restarting_; // no poll, no next phase, no new cut until the shard is back
  hook<std::string>(
    [this, i, why, down](std::string& e) {
      if (e.empty())
        return reload(i, why, down);
      --restarting_;
      restart_failed(std::move(e));
    },
    messages::restart_atom::value, std::uint64_t(i), why,
    std::uint64_t(cut_ ? cut_->id() : 0)); // a cut in flight is over for the new shard
}

void coordinator_protocol::restart_failed(std::string e) {
  phases_.fail(e);
  if (auto run = cut_) // (a cut waiting for the shard would wait until cluster.timeout)
    run->abort(e);
}

void coordinator_protocol::reload(std::size_t i, const std::string& why,
                                  caf::actor_clock::time_point down) {
  // The new shard (the caller put it in place) reloads its own newest save;
  // the coordinator goes on handling its messages meanwhile.
  self_->request(c().shards[i], caf::duration{cfg().cluster.timeout}, actors::recover_atom::value)
    .then(
      [this, i, down](std::uint64_t bytes, std::uint64_t saves, std::int64_t at,
                      std::int64_t ready) {
        --restarting_;
        if (ended_)
          return;
        const shard_restart r{bytes, saves, at, ready, ns_of(down), ns_of(now())};
        caf::anon_send(setup_.caller, messages::restarted_atom::value, std::uint64_t(i), r);
        rebind(i);
        retake_cut();
        after_event();
      },
      [this, i, why](caf::error& e) {
        --restarting_;
        if (ended_)
          return;
        restart_failed(c().shard_names[i] + " is down (" + why + ") and its restart failed: " +
                       self_->system().render(e));
        after_event();
      });
}

void coordinator_protocol::rebind(std::size_t i) {
  // The caller put the new shard in its place (and, multi-node, a node
  // agent that came back in its node's).
  monitor(c().shards[i].address());
  for (const auto& n : c().nodes)
    monitor(n.agent);
  auto handle = caf::actor_cast<caf::strong_actor_ptr>(c().shards[i]);
  const auto& alive = phases_.alive();
  for (std::size_t t = 0; t < c().trainers.size(); ++t)
    if (alive[t])
      self_->send(c().trainers[t], actors::rebind_atom::value, std::uint32_t(i), handle);
}

} // namespace runtime
