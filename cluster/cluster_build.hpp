#pragma once
// The simulated cluster's roles spawned from the plan (cluster_plan.hpp):
// embedding shards first, then the EASGD dense shards, then the trainers
// with the shards' handles; and what faults.* asks of them.
#include <memory>
#include <optional>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/embedding_shard_cpr.hpp"
#include "cluster/cluster_handles.hpp"
#include "cluster/cluster_plan.hpp"
#include "cluster/coordinator.hpp"
#include "config/faults.hpp"
#include "config/train_config.hpp"

namespace runtime {

// Whether faults.* asks for `what` (of a role of `kind`, if given).
bool asks_for(const train_config& cfg, fault_event::action what,
              std::optional<fault_event::role> kind = std::nullopt);

// faults.kill names a trainer (a lost peer re-forms the ring).
bool kills_trainers(const train_config& cfg);

// What a resumed run's roles start from (cluster_start), for the simulated
// cluster and a multi-node run's nodes alike: an embedding shard's rows, and
// trainer t's replica, dense optimiser state, reader position and syncer
// state. (A dense shard starts from start.centre.)
void resume_shard(actors::embedding_shard_config& ec, const train_config& cfg,
                  const cluster_start& start);
void resume_trainer(actors::trainer_config& tc, const train_config& cfg,
                    const cluster_start& start, std::size_t t);

// Spawns every role of cfg into c (and the trainers' peers), from `init`
// (the dense parameters) or, resumed, from `start`; cpr: the shards' save
// counters (recovery.mode=partial).
void build_cluster(caf::actor_system& sys, const train_config& cfg, const std::vector<float>& init,
                   const cluster_start* start, const std::shared_ptr<actors::cpr_counters>& cpr,
                   cluster_handles& c, trainer_peers& peers);

} // namespace runtime
