#pragma once
// The coordinator node's waits on its agent's roster (the notices of every
// change, in order) and on the node agents it asks to spawn roles:
// every node ready at the start, and under recovery.mode=partial or full
// the new process of a lost shard's node (node_coordinator.cpp runs the job).
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <caf/scoped_actor.hpp>

#include "cluster/cluster_handles.hpp"
#include "deploy/node.hpp"
#include "messages/node_messages.hpp"

namespace runtime {

// The roster as the coordinator's agent last told it (its roster_watcher,
// node_agent_config): the notices arrive in the order the agent sent them,
// so the newest one read is the roster as it is now.
class roster_watch {
public:
  explicit roster_watch(caf::scoped_actor& inbox) : inbox_(inbox) {}

  const messages::node_roster& latest() const { return latest_; }

  // Reads notices until `done(latest())` holds (true) or `deadline` passes
  // (false). No notice is lost between calls: the ones not read yet stay
  // in the inbox.
  template <class Pred>
  bool wait_until(std::chrono::steady_clock::time_point deadline, Pred done) {
    while (!done(latest_)) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero())
        return false;
      bool timed_out = false;
      inbox_->receive([&](messages::roster_atom, messages::node_roster& r) { latest_ = std::move(r); },
                      caf::after(std::chrono::ceil<std::chrono::milliseconds>(left)) >>
                        [&] { timed_out = true; });
      if (timed_out)
        return done(latest_);
    }
    return true;
  }

private:
  caf::scoped_actor& inbox_;
  messages::node_roster latest_; // empty until the agent's first notice
};

// Waits until every node of the spec has joined and is ready.
std::optional<std::string> wait_for_nodes(roster_watch& watch, const node_context& ctx,
                                          messages::node_roster& roster);

// Has node `n` (its agent) start the roles of `plan`; their handles in `out`.
std::optional<std::string> spawn_on(caf::scoped_actor& self, const node_context& ctx,
                                    const node_agent_actor& agent, const node_address& n,
                                    const messages::role_plan& plan,
                                    messages::spawned_roles& out);

// recovery.mode=partial: embedding shard i's node died. Waits for a new
// process of that node (shadowsync launch --restart=on-failure, or started
// by hand) to rejoin, has it spawn the shard again, and puts the new handles
// in place (agents, c.shards, c.nodes); the coordinator actor then has the
// shard reload its newest save.
// host[i]: the agent of the process that ran shard i (a node's second lost
// shard finds its node already back).
std::optional<std::string> restart_remote_shard(caf::scoped_actor& self, const node_context& ctx,
                                                roster_watch& watch,
                                                std::vector<node_agent_actor>& agents,
                                                std::vector<caf::strong_actor_ptr>& host,
                                                cluster_handles& c, std::size_t i,
                                                const std::vector<caf::node_id>& trainer_nodes);

// recovery.mode=full, after a rollback stopped every role: waits until
// every node of the spec is ready, each lost node (`lost`: the lost
// embedding shard's node, when the loss names one; and every node whose
// agent is down) with a new process, and puts the new processes' agents in
// `agents` (spec order).
std::optional<std::string> await_nodes_back(caf::scoped_actor& self, const node_context& ctx,
                                            roster_watch& watch,
                                            std::vector<node_agent_actor>& agents,
                                            std::optional<std::size_t> lost);

// The spec index of the node that hosts embedding shard i (deploy.nodes.size()
// when none does).
std::size_t node_of_shard(const deploy_settings& d, std::size_t i);

} // namespace runtime
