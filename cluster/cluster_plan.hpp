#pragma once
// What each role of a cluster is spawned with, derived from the run's
// configuration. The one-process cluster (cluster.cpp) and every node of a
// multi-node cluster (node.cpp) build their actors' configurations here, so
// both run exactly the same roles with the same settings.
#include <cstdint>
#include <memory>
#include <vector>

#include <optional>

#include "actors/dense_shard.hpp"
#include "actors/embedding_shard.hpp"
#include "sim/network_model.hpp"
#include "actors/trainer.hpp"
#include "model/dlrm.hpp"
#include "config/faults.hpp"
#include "config/train_config.hpp"

namespace runtime {

struct cluster_start; // a resumed run's starting point (coordinator.hpp)

// Whether faults.* asks for `what` (of a role of `kind`, if given).
bool asks_for(const train_config& cfg, fault_event::action what,
              std::optional<fault_event::role> kind = std::nullopt);

// faults.kill names a trainer (a lost peer re-forms the ring).
bool kills_trainers(const train_config& cfg);

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

// What a resumed run's roles start from (cluster_start): an embedding
// shard's rows, and trainer t's replica, dense optimiser state, reader
// position and syncer state. (A dense shard starts from start.centre.)
void resume_shard(actors::embedding_shard_config& ec, const train_config& cfg,
                  const cluster_start& start);
void resume_trainer(actors::trainer_config& tc, const train_config& cfg,
                    const cluster_start& start, std::size_t t);

// The roles to configure: every role of the cluster (the simulated cluster,
// role_choice::all) or a node's share of a multi-node plan.
struct role_choice {
  std::vector<std::uint32_t> embedding_shards, dense_shards, trainers;
  bool reform_on_loss = false; // a trainer's syncers re-form the ring without a lost peer
  // Every shard, the dense shards with EASGD, every trainer; the ring
  // re-forms when faults.kill names a trainer.
  static role_choice all(const train_config& cfg);
};

// The chosen roles' configurations, derived from the run's configuration in
// one place for the simulated cluster and every node alike. The trainers'
// handles of their peers are bound at spawn (bind_peers).
struct role_configs {
  placement place;
  std::vector<float> init; // the dense parameters of a fresh run
  std::vector<model::range> dense_ranges;
  std::vector<actors::embedding_shard_config> embedding_shards; // in role_choice order
  std::vector<actors::dense_shard_config> dense_shards;
  std::vector<actors::trainer_config> trainers;
};

// Configures the roles of `which` from `cfg`, fresh (start null: the dense
// parameters from initial_dense) or resumed from *start. With
// cluster.local-rows each embedding shard's config carries the tables its
// trainers' workers will use.
role_configs configure_roles(const train_config& cfg, const model::dlrm& net,
                             const cluster_start* start, const role_choice& which);

// A trainer's handles of its peers (the shards, cluster.local-rows' tables
// and the EASGD dense shards), once they are spawned.
void bind_peers(actors::trainer_config& tc, const trainer_peers& peers);

} // namespace runtime
