// A node's roles from a plan (see node_plan.hpp).
#include "deploy/node_plan.hpp"

#include <caf/all.hpp>

#include "cluster/cluster_plan.hpp"
#include "cluster/role_plan_checks.hpp"
#include "cluster/memory_estimate.hpp"
#include "deploy/isa_check.hpp"
#include "deploy/node_agent.hpp"
#include "engine/synthetic_data.hpp"
#include "messages/errors.hpp"

namespace runtime {

using namespace messages;

std::optional<std::string> prepare(const role_plan& plan, prepared_plan& out) {
  out.plan = plan;
  if (auto err = parse_run_config(plan.config_ini, out.cfg, &out.deploy))
    return err;
  if (auto why = check_role_plan(plan, out.cfg); !why.empty())
    return why;
  // The coordinator's configuration, for the roles of this plan (issue 40).
  return check_memory(out.cfg, plan_roles(plan), physical_memory_bytes());
}

spawned_roles spawn_roles(caf::local_actor* self, const prepared_plan& p) {
  const auto& plan = p.plan;
  model::dlrm net(p.cfg.arch);
  role_choice which{plan.embedding_shards, plan.dense_shards, plan.trainers,
                    p.deploy.tolerate_trainer_loss};
  auto roles = configure_roles(p.cfg, net, p.start.get(), which);
  spawned_roles out;
  for (auto& ec : roles.embedding_shards) {
    ec.who = p.who;
    out.embedding_shards.push_back(
      caf::actor_cast<caf::strong_actor_ptr>(self->spawn(actors::embedding_shard, std::move(ec))));
  }
  for (auto& dc : roles.dense_shards) {
    dc.who = p.who;
    out.dense_shards.push_back(
      caf::actor_cast<caf::strong_actor_ptr>(self->spawn(actors::dense_shard, std::move(dc))));
  }
  trainer_peers peers; // every shard of the cluster, from the plan
  for (const auto& s : plan.shards)
    peers.shards.push_back(caf::actor_cast<actors::embedding_shard_actor>(s));
  for (const auto& d : plan.dense)
    peers.dense.push_back(caf::actor_cast<actors::dense_shard_actor>(d));
  for (auto& tc : roles.trainers) {
    bind_peers(tc, peers);
    tc.who = p.who;
    out.trainers.push_back(
      caf::actor_cast<caf::strong_actor_ptr>(self->spawn(actors::trainer, std::move(tc))));
  }
  return out;
}

caf::behavior resume_loader(caf::event_based_actor* self, std::shared_ptr<prepared_plan> p) {
  return {
    [=](start_atom) -> caf::result<bool> {
      self->quit();
      auto start = std::make_shared<cluster_start>();
      model::dlrm net(p->cfg.arch);
      if (auto err = load_cluster_start(p->cfg, net, *start, !p->plan.embedding_shards.empty()))
        return make_error(errc::input_error, "cannot resume: " + *err);
      p->start = std::move(start);
      return true;
    },
  };
}

// Generates (or finds) the default synthetic training set on its own thread:
// a million rows take seconds, too long to hold a scheduler thread. Replies
// to start with the training file's path, then quits.
caf::behavior synthetic_preparer(caf::event_based_actor* self, data_settings d) {
  return {
    [=](start_atom) -> caf::result<std::string> {
      self->quit();
      synthetic_paths paths;
      if (auto err = ensure_synthetic(d, paths))
        return make_error(errc::input_error, *err);
      return paths.train;
    },
  };
}

} // namespace runtime
