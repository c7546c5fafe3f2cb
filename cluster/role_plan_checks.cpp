// A multi-node role plan's and reply's checks (see role_plan_checks.hpp).
#include "cluster/role_plan_checks.hpp"

#include <algorithm>
#include <string>

namespace runtime {

namespace {

// "" when every index is below `count` and none repeats.
std::string check_indices(const std::vector<std::uint32_t>& xs, std::size_t count,
                          const char* what, const char* key) {
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] >= count)
      return std::string(what) + " index " + std::to_string(xs[i]) + " is out of range (" +
             key + " = " + std::to_string(count) + ")";
    if (std::find(xs.begin(), xs.begin() + std::ptrdiff_t(i), xs[i]) != xs.begin() + std::ptrdiff_t(i))
      return std::string(what) + " index " + std::to_string(xs[i]) + " is listed twice";
  }
  return {};
}

// "" when there are `want` handles and none is null.
std::string check_handles(const std::vector<caf::strong_actor_ptr>& hs, std::size_t want,
                          const char* what) {
  if (hs.size() != want)
    return std::to_string(hs.size()) + " " + what + " handle(s), expected " +
           std::to_string(want);
  for (std::size_t i = 0; i < hs.size(); ++i)
    if (!hs[i])
      return std::string(what) + " handle " + std::to_string(i) + " is null";
  return {};
}

} // namespace

std::string check_role_plan(const messages::role_plan& plan, const train_config& cfg) {
  const auto& cl = cfg.cluster;
  const bool easgd = model::is_easgd(cfg.sync.algorithm);
  auto err = check_indices(plan.embedding_shards, cl.embedding_shards, "embedding shard",
                           "cluster.embedding-shards");
  if (err.empty())
    err = check_indices(plan.dense_shards, easgd ? cl.dense_shards : 0, "dense shard",
                        easgd ? "cluster.dense-shards" : "dense shards without EASGD");
  if (err.empty())
    err = check_indices(plan.trainers, cl.trainers, "trainer", "cluster.trainers");
  if (err.empty() && !plan.trainers.empty()) {
    err = check_handles(plan.shards, cl.embedding_shards, "embedding shard");
    if (err.empty())
      err = check_handles(plan.dense, easgd ? cl.dense_shards : 0, "dense shard");
  }
  if (err.empty() && plan.trainer_nodes.size() != cl.trainers)
    err = "the nodes of " + std::to_string(plan.trainer_nodes.size()) + " trainers, expected " +
          std::to_string(cl.trainers) + " (cluster.trainers)";
  return err.empty() ? err : "role plan: " + err;
}

memory_roles plan_roles(const messages::role_plan& plan) {
  memory_roles r;
  r.trainers = plan.trainers.size();
  r.embedding_shards = plan.embedding_shards.size();
  r.dense_shards = plan.dense_shards.size();
  r.evaluates = false;
  r.who = "this node's plan";
  return r;
}

std::string check_spawned(const messages::role_plan& plan, const messages::spawned_roles& r) {
  auto err = check_handles(r.embedding_shards, plan.embedding_shards.size(), "embedding shard");
  if (err.empty())
    err = check_handles(r.dense_shards, plan.dense_shards.size(), "dense shard");
  if (err.empty())
    err = check_handles(r.trainers, plan.trainers.size(), "trainer");
  return err.empty() ? err : "spawned roles: " + err;
}

} // namespace runtime
