#pragma once
// The simulated cluster's roles spawned from their configurations
// (cluster_plan.hpp: configure_roles): embedding shards first, then the
// EASGD dense shards, then the trainers with the shards' handles.
#include <memory>

#include <caf/fwd.hpp>

#include "actors/embedding_shard_cpr.hpp"
#include "cluster/cluster_handles.hpp"
#include "cluster/cluster_plan.hpp"

namespace runtime {

// Spawns the roles of `roles`, each on its simulated host, into c; cpr: the
// shards' save counters (recovery.mode=partial).
void build_cluster(caf::actor_system& sys, role_configs roles,
                   const std::shared_ptr<actors::cpr_counters>& cpr, cluster_handles& c);

} // namespace runtime
