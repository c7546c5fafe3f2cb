// The coordinator node's waits (see node_roster.hpp):
//   coordinator agent -> coordinator main: roster (every change)
//   coordinator main -> agent: spawn (the roles of a plan)
#include "deploy/node_roster.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/role_plan_checks.hpp"

namespace runtime {

using namespace messages;
using clock_type = std::chrono::steady_clock;

namespace {

void say_waiting(const deploy_settings& d, std::size_t k) {
  spdlog::warn("waiting up to {} ms (deploy.startup-timeout-ms) for node {} to come back: "
               "`shadowsync launch --restart=on-failure` restarts it, or start it by hand "
               "with `shadowsync node --node={}`",
               d.startup_timeout.count(), d.nodes[k].text(), d.nodes[k].id);
}

} // namespace

std::size_t node_of_shard(const deploy_settings& d, std::size_t i) {
  std::size_t k = 0;
  while (i < d.embedding_shards.size() && k < d.nodes.size() &&
         d.nodes[k].id != d.embedding_shards[i])
    ++k;
  return i < d.embedding_shards.size() ? k : d.nodes.size();
}

// Waits until every node of the spec has joined and is ready.
std::optional<std::string> wait_for_nodes(roster_watch& watch, const node_context& ctx,
                                          node_roster& roster) {
  const auto& d = ctx.deploy;
  const auto deadline = clock_type::now() + d.startup_timeout;
  std::size_t last_ready = 0;
  auto all_ready = [&](const node_roster& r) {
    std::size_t ready = 0;
    for (auto x : r.ready)
      ready += x ? 1 : 0;
    if (ready != last_ready) {
      spdlog::info("{} of {} node(s) ready", ready, r.nodes.size());
      last_ready = ready;
    }
    return !r.nodes.empty() && ready == r.nodes.size();
  };
  if (watch.wait_until(deadline, all_ready)) {
    roster = watch.latest();
    return std::nullopt;
  }
  const auto& r = watch.latest();
  std::string missing;
  for (std::size_t i = 0; i < r.nodes.size(); ++i)
    if (!r.ready[i])
      missing += (missing.empty() ? "" : ", ") + d.nodes[i].text() +
                 (r.agents[i] ? " joined but not ready" : "");
  return "nodes missing after " + std::to_string(d.startup_timeout.count()) +
         " ms (deploy.startup-timeout-ms): " + missing;
}

// Has node `n` (its agent) start the roles of `plan`; their handles in `out`.
std::optional<std::string> spawn_on(caf::scoped_actor& self, const node_context& ctx,
                                    const node_agent_actor& agent, const node_address& n,
                                    const role_plan& plan, spawned_roles& out) {
  std::optional<std::string> err;
  self->request(agent, ctx.cfg.cluster.timeout, spawn_atom::value, plan)
    .receive(
      [&](spawned_roles& r) {
        if (auto why = check_spawned(plan, r); !why.empty())
          err = "node " + n.text() + " answered its plan with " + why;
        else
          out = std::move(r);
      },
      [&](caf::error& e) {
        err = "node " + n.text() + " could not start its roles: " + self->system().render(e);
      });
  return err;
}

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
                                                const std::vector<caf::node_id>& trainer_nodes) {
  const auto& d = ctx.deploy;
  const auto k = node_of_shard(d, i);
  if (k >= agents.size())
    return "embedding shard " + std::to_string(i) + " has no node in deploy.nodes";
  const auto old = host[i];
  if (old == caf::actor_cast<caf::strong_actor_ptr>(agents[k]))
    say_waiting(d, k);
  const auto deadline = clock_type::now() + d.startup_timeout;
  auto back = [&](const node_roster& r) {
    return k < r.agents.size() && r.agents[k] && r.ready[k] && r.agents[k] != old;
  };
  if (!watch.wait_until(deadline, back))
    return "node " + d.nodes[k].text() + " did not come back within " +
           std::to_string(d.startup_timeout.count()) + " ms (deploy.startup-timeout-ms)";
  const auto fresh = watch.latest().agents[k];
  if (fresh != caf::actor_cast<caf::strong_actor_ptr>(agents[k])) {
    agents[k] = caf::actor_cast<node_agent_actor>(fresh);
    self->monitor(agents[k]);
    for (auto& n : c.nodes)
      if (n.agent == old->address())
        n.agent = agents[k].address();
  }
  host[i] = fresh;
  role_plan plan;
  plan.config_ini = ctx.config_ini;
  plan.embedding_shards = {std::uint32_t(i)};
  plan.trainer_nodes = trainer_nodes;
  spawned_roles r;
  if (auto err = spawn_on(self, ctx, agents[k], d.nodes[k], plan, r))
    return err;
  c.shards[i] = caf::actor_cast<actors::embedding_shard_actor>(r.embedding_shards[0]);
  return std::nullopt; // (the coordinator actor has it reload its newest save)
}

std::optional<std::string> await_nodes_back(caf::scoped_actor& self, const node_context& ctx,
                                            roster_watch& watch,
                                            std::vector<node_agent_actor>& agents,
                                            std::optional<std::size_t> lost) {
  const auto& d = ctx.deploy;
  // A node is lost when it hosted the lost shard or its agent is down. (The
  // roster may still list a dead process until the coordinator's agent has
  // taken its DOWN; a monitor of a gone remote actor answers at once: the
  // middleman killed its proxy with the connection, the same event that
  // brought the role's DOWN.)
  std::vector<caf::strong_actor_ptr> old(agents.size());
  {
    caf::scoped_actor probe{self->system()};
    for (std::size_t k = 0; k < agents.size(); ++k)
      probe->monitor(agents[k]);
    bool more = true;
    while (more)
      probe->receive(
        [&](caf::down_msg& dm) {
          for (std::size_t k = 0; k < agents.size(); ++k)
            if (agents[k].address() == dm.source)
              old[k] = caf::actor_cast<caf::strong_actor_ptr>(agents[k]);
        },
        caf::after(std::chrono::milliseconds(0)) >> [&] { more = false; });
  }
  if (lost && *lost < agents.size())
    old[*lost] = caf::actor_cast<caf::strong_actor_ptr>(agents[*lost]);
  for (std::size_t k = 0; k < old.size(); ++k)
    if (old[k])
      say_waiting(d, k);
  auto node_back = [&](const node_roster& r, std::size_t k) {
    return k < r.agents.size() && r.agents[k] && r.ready[k] &&
           !(k < old.size() && old[k] && r.agents[k] == old[k]);
  };
  auto back = [&](const node_roster& r) {
    for (std::size_t k = 0; k < d.nodes.size(); ++k)
      if (!node_back(r, k))
        return false;
    return true;
  };
  const auto deadline = clock_type::now() + d.startup_timeout;
  if (!watch.wait_until(deadline, back)) {
    std::string missing;
    for (std::size_t k = 0; k < d.nodes.size(); ++k)
      if (!node_back(watch.latest(), k))
        missing += (missing.empty() ? "" : ", ") + d.nodes[k].text();
    return "rolling back: node(s) " + missing + " did not come back within " +
           std::to_string(d.startup_timeout.count()) + " ms (deploy.startup-timeout-ms)";
  }
  const auto& r = watch.latest();
  for (std::size_t k = 0; k < agents.size() && k < r.agents.size(); ++k)
    if (r.agents[k] != caf::actor_cast<caf::strong_actor_ptr>(agents[k])) {
      agents[k] = caf::actor_cast<node_agent_actor>(r.agents[k]);
      self->monitor(agents[k]);
    }
  return std::nullopt;
}

} // namespace runtime
