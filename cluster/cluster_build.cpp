// The simulated cluster's roles (see cluster_build.hpp).
#include "cluster/cluster_build.hpp"

#include <caf/all.hpp>

#include "actors/sim_host.hpp"

namespace runtime {

void build_cluster(caf::actor_system& sys, role_configs roles,
                   const std::shared_ptr<actors::cpr_counters>& cpr, cluster_handles& c) {
  const auto& place = roles.place;
  trainer_peers peers;
  for (auto& ec : roles.embedding_shards) {
    ec.cpr.counters = cpr;
    if (ec.local)
      peers.local_rows.push_back(ec.local);
    const auto host = place.host_of_embedding(ec.shard);
    c.shards.push_back(actors::spawn_role(sys, host, actors::embedding_shard, std::move(ec)));
  }
  peers.shards = c.shards;
  for (auto& dc : roles.dense_shards) {
    const auto host = place.host_of_dense(dc.shard);
    c.dense.push_back(actors::spawn_role(sys, host, actors::dense_shard, std::move(dc)));
  }
  peers.dense = c.dense;
  for (auto& tc : roles.trainers) {
    bind_peers(tc, peers);
    const auto host = place.host_of_trainer(tc.trainer);
    c.trainers.push_back(actors::spawn_role(sys, host, actors::trainer, std::move(tc)));
  }
  name_roles(c);
}

} // namespace runtime
