// The cluster's start on the nodes (see node_spawn.hpp):
//   coordinator main -> every agent: spawn(plan: its shards) -> shard handles
//   coordinator main -> every agent: spawn(plan: its trainers, every shard)
#include "deploy/node_spawn.hpp"

#include <caf/all.hpp>

#include "config/option_values.hpp"
#include "config/options.hpp"
#include "config/train_config.hpp"
#include "deploy/node_roster.hpp"
#include "model/sync_rules.hpp"

namespace runtime {

namespace {

using namespace messages;

// Sends each node its part of `plan_for(i)` and collects the spawned roles.
template <class PlanFor>
std::optional<std::string> spawn_everywhere(caf::scoped_actor& self, const node_context& ctx,
                                            const std::vector<node_agent_actor>& agents,
                                            PlanFor plan_for, std::vector<spawned_roles>& out) {
  out.assign(agents.size(), spawned_roles{});
  std::optional<std::string> err;
  for (std::size_t i = 0; i < agents.size() && !err; ++i)
    err = spawn_on(self, ctx, agents[i], ctx.deploy.nodes[i], plan_for(i), out[i]);
  return err;
}

// The CAF node of each trainer's process (the agent the coordinator admitted
// for the node the spec gives that trainer), by trainer id.
std::vector<caf::node_id> trainer_nodes_of(const deploy_settings& d,
                                           const std::vector<node_agent_actor>& agents,
                                           std::size_t trainers) {
  std::vector<caf::node_id> out(trainers);
  for (std::size_t i = 0; i < agents.size() && i < d.nodes.size(); ++i)
    for (auto t : d.trainers_on(d.nodes[i].id))
      if (t < out.size() && agents[i])
        out[t] = agents[i].node();
  return out;
}

// The nodes the coordinator watches: every node but its own, named by the
// roles it hosts. An embedding shard's node is not essential under
// recovery.mode=partial (the shard is restarted) or full (the cluster rolls
// back): the shard's own DOWN names the loss.
void watch_nodes(const node_context& ctx, const std::vector<node_agent_actor>& agents,
                 cluster_handles& c) {
  const auto& d = ctx.deploy;
  const auto& cfg = ctx.cfg;
  for (std::size_t i = 0; i < agents.size(); ++i) {
    const auto& id = d.nodes[i].id;
    if (id == d.coordinator)
      continue; // its roles end with this process
    cluster_handles::node n;
    n.agent = agents[i].address();
    n.name = "node " + d.nodes[i].text();
    std::string hosts;
    for (auto e : d.embedding_shards_on(id))
      hosts += (hosts.empty() ? "" : ", ") + std::string("embedding shard ") + std::to_string(e);
    for (auto x : d.dense_shards_on(id))
      hosts += (hosts.empty() ? "" : ", ") + std::string("dense shard ") + std::to_string(x);
    if (!hosts.empty())
      n.name += " hosting " + hosts;
    for (auto t : d.trainers_on(id))
      n.trainers.push_back(t);
    const bool shard_recovers = cfg.recovery.partial || cfg.recovery.full;
    n.essential = (!d.embedding_shards_on(id).empty() && !shard_recovers) ||
                  (model::is_easgd(cfg.sync.algorithm) && !d.dense_shards_on(id).empty());
    c.nodes.push_back(std::move(n));
  }
}

} // namespace

std::optional<std::string> spawn_cluster(caf::scoped_actor& self, const node_context& ctx,
                                         const std::vector<node_agent_actor>& agents,
                                         const std::string& config_ini, cluster_handles& c,
                                         std::vector<caf::node_id>& trainer_nodes) {
  const auto& d = ctx.deploy;
  const auto& cfg = ctx.cfg;
  role_plan base;
  base.config_ini = config_ini;
  base.trainer_nodes = trainer_nodes = trainer_nodes_of(d, agents, cfg.cluster.trainers);
  std::vector<spawned_roles> shards, trainers;
  auto err = spawn_everywhere(self, ctx, agents, [&](std::size_t i) {
    auto p = base;
    p.embedding_shards = d.embedding_shards_on(d.nodes[i].id);
    if (model::is_easgd(cfg.sync.algorithm))
      p.dense_shards = d.dense_shards_on(d.nodes[i].id);
    return p;
  }, shards);
  c = cluster_handles{};
  c.shards.resize(cfg.cluster.embedding_shards);
  if (model::is_easgd(cfg.sync.algorithm))
    c.dense.resize(cfg.cluster.dense_shards);
  c.trainers.resize(cfg.cluster.trainers);
  name_roles(c);
  for (std::size_t i = 0; i < agents.size() && !err; ++i) {
    const auto& id = d.nodes[i].id;
    auto es = d.embedding_shards_on(id);
    for (std::size_t k = 0; k < es.size() && k < shards[i].embedding_shards.size(); ++k) {
      c.shards[es[k]] = caf::actor_cast<actors::embedding_shard_actor>(shards[i].embedding_shards[k]);
      c.shard_names[es[k]] += " on node " + id;
    }
    auto ds = d.dense_shards_on(id);
    for (std::size_t k = 0; k < ds.size() && k < shards[i].dense_shards.size(); ++k) {
      c.dense[ds[k]] = caf::actor_cast<actors::dense_shard_actor>(shards[i].dense_shards[k]);
      c.dense_names[ds[k]] += " on node " + id;
    }
  }
  if (!err) {
    for (auto& s : c.shards)
      base.shards.push_back(caf::actor_cast<caf::strong_actor_ptr>(s));
    for (auto& x : c.dense)
      base.dense.push_back(caf::actor_cast<caf::strong_actor_ptr>(x));
    err = spawn_everywhere(self, ctx, agents, [&](std::size_t i) {
      auto p = base;
      p.trainers = d.trainers_on(d.nodes[i].id);
      return p;
    }, trainers);
  }
  for (std::size_t i = 0; i < agents.size() && !err; ++i) {
    const auto& id = d.nodes[i].id;
    auto ts = d.trainers_on(id);
    for (std::size_t k = 0; k < ts.size() && k < trainers[i].trainers.size(); ++k) {
      c.trainers[ts[k]] = caf::actor_cast<actors::trainer_actor>(trainers[i].trainers[k]);
      c.trainer_names[ts[k]] += " on node " + id;
    }
  }
  if (!err)
    watch_nodes(ctx, agents, c);
  return err;
}

std::optional<std::string> ini_resuming(const std::string& ini, const std::string& cut,
                                        std::string& out) {
  option_set opts;
  add_train_options(opts);
  add_deploy_options(opts);
  if (auto e = opts.parse_text(ini, "coordinator's configuration"))
    return *e;
  if (auto e = opts.set("checkpoint.resume", detail::quote(cut), "rollback"))
    return *e;
  out = opts.effective_ini();
  return std::nullopt;
}

} // namespace runtime
