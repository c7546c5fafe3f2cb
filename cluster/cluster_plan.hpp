#pragma once
// What each role of a cluster is spawned with, derived from the run's
// configuration. The one-process cluster (cluster.cpp) and every node of a
// multi-node cluster (node.cpp) build their actors' configurations here, so
// both run exactly the same roles with the same settings.
#include <cstdint>
#include <memory>
#include <vector>

#include "actors/dense_shard.hpp"
#include "actors/embedding_shard.hpp"
#include "cluster/memory_estimate.hpp"
#include "sim/network_model.hpp"
#include "actors/trainer.hpp"
#include "messages/node_messages.hpp"
#include "model/dlrm.hpp"
#include "config/train_config.hpp"

namespace runtime {

// The simulated hosts of cluster.mode=simulated (network_model.hpp).
placement placement_for(const train_config& cfg);

// The initial dense parameters (identical everywhere: seeded by train.seed).
std::vector<float> initial_dense(const train_config& cfg, const model::dlrm& net);

// Embedding shard s of cluster.embedding-shards. Precondition: s < embedding-shards.
actors::embedding_shard_config embedding_shard_config_for(const train_config& cfg,
                                                          std::size_t s);

// The dense shards' ranges of the flat parameter buffer.
std::vector<model::range> dense_ranges_for(const train_config& cfg, std::size_t params);

// Dense shard d: its range of `init` as the initial EASGD centre.
// Precondition: d < ranges.size().
actors::dense_shard_config dense_shard_config_for(const train_config& cfg,
                                                  const std::vector<float>& init,
                                                  const std::vector<model::range>& ranges,
                                                  std::size_t d);

// Where the trainer finds its peers.
struct trainer_peers {
  std::vector<actors::embedding_shard_actor> shards;
  std::vector<actors::dense_shard_actor> dense; // EASGD only; else empty
  std::vector<model::range> dense_ranges;
  placement place; // simulated hosts (cluster.mode=simulated)
  std::vector<actors::rows_ptr> local_rows; // cluster.local-rows: per shard
  // The decompressed sizes of data.train's compressed files, measured once
  // for every trainer's reader (measure_train_sizes); null: each measures.
  std::shared_ptr<const data::input_sizes> train_sizes;
};

// data.train's compressed files decompressed once, so that the trainers'
// readers split them without each decompressing them again; null when there
// is one trainer or nothing compressed. Logs what it measured.
std::shared_ptr<const data::input_sizes> measure_train_sizes(const train_config& cfg);

// Trainer t: its part of data.train, its syncer, its workers.
// Precondition: t < cluster.trainers.
actors::trainer_config trainer_config_for(const train_config& cfg, std::size_t t,
                                          const std::vector<float>& init,
                                          const trainer_peers& peers);

// Multi-node: a role_plan arrives from the wire. Checks it against the
// configuration it carries (`cfg`, parsed from plan.config_ini) before any
// index is used: every role index within its count, no index twice, and for
// trainers one non-null handle per embedding shard (and per dense shard with
// EASGD). Returns an empty string when the plan is sound, else what is wrong.
std::string check_role_plan(const messages::role_plan& plan, const train_config& cfg);

// The roles a plan asks a node to spawn, for the memory check (the
// evaluation is the coordinator's, checked at its start).
memory_roles plan_roles(const messages::role_plan& plan);

// The coordinator's check of a node's reply: one non-null handle per role
// index of the plan it answered. Empty when sound, else what is wrong.
std::string check_spawned(const messages::role_plan& plan, const messages::spawned_roles& r);

} // namespace runtime
