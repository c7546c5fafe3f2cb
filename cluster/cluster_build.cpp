// The simulated cluster's roles (see cluster_build.hpp).
#include "cluster/cluster_build.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "actors/sim_host.hpp"

namespace runtime {

// Whether faults.* asks for `what` (of a role of `kind`, if given).
bool asks_for(const train_config& cfg, fault_event::action what,
              std::optional<fault_event::role> kind) {
  return std::any_of(cfg.sim.faults.begin(), cfg.sim.faults.end(), [&](const auto& k) {
    return k.what == what && (!kind || k.kind == *kind);
  });
}

bool kills_trainers(const train_config& cfg) {
  return asks_for(cfg, fault_event::action::kill, fault_event::role::trainer);
}

void resume_shard(actors::embedding_shard_config& ec, const train_config& cfg,
                  const cluster_start& start) {
  ec.initial = start.tables;
  ec.initial_dynamic = start.dynamic;
  ec.cpr.save_at_start = cfg.recovery.partial; // a restart must not fall back to random rows
}

void resume_trainer(actors::trainer_config& tc, const train_config& cfg,
                    const cluster_start& start, std::size_t t) {
  tc.initial_state = start.state;
  if (!start.replicas.empty()) { // the same trainers: each its own replica
    tc.initial_params = start.replicas[t].params;
    tc.initial_state = start.replicas[t].state;
  }
  tc.reader.resume = start.readers[t];
  // BMUF: every syncer must start from the same w_g (its replica may be
  // its own): the saved block state, else the replicas' average.
  tc.syncer.initial = start.bmuf_global.empty() ? start.params : start.bmuf_global;
  tc.syncer.initial_momentum = start.bmuf_momentum;
  if (cfg.dct.dp)
    tc.syncer.dct_origin = start.centre; // the dense shards' centre at spawn
}

void build_cluster(caf::actor_system& sys, const train_config& cfg, const std::vector<float>& init,
                   const cluster_start* start, const std::shared_ptr<actors::cpr_counters>& cpr,
                   cluster_handles& c, trainer_peers& peers) {
  const auto& cl = cfg.cluster;
  peers.place = placement_for(cfg);
  peers.train_sizes = measure_train_sizes(cfg);
  for (std::size_t s = 0; s < cl.embedding_shards; ++s) {
    auto ec = embedding_shard_config_for(cfg, s);
    ec.cpr.counters = cpr;
    if (start)
      resume_shard(ec, cfg, *start);
    if (cl.local_rows) { // the shard attaches its tables; the workers use them
      ec.local = std::make_shared<actors::hogwild_rows>(ec.num_shards, ec.optimizer);
      peers.local_rows.push_back(ec.local);
    }
    c.shards.push_back(actors::spawn_role(sys, peers.place.host_of_embedding(s),
                                          actors::embedding_shard, std::move(ec)));
  }
  peers.shards = c.shards;
  peers.dense_ranges = dense_ranges_for(cfg, init.size());
  if (model::is_easgd(cfg.sync.algorithm))
    for (std::size_t d = 0; d < cl.dense_shards; ++d)
      c.dense.push_back(actors::spawn_role(
        sys, peers.place.host_of_dense(d), actors::dense_shard,
        dense_shard_config_for(cfg, start ? start->centre : init, peers.dense_ranges, d)));
  peers.dense = c.dense;
  for (std::size_t t = 0; t < cl.trainers; ++t) {
    auto tc = trainer_config_for(cfg, t, init, peers);
    tc.syncer.reform_on_loss = kills_trainers(cfg); // faults.kill: a lost peer re-forms the ring
    if (start)
      resume_trainer(tc, cfg, *start, t);
    c.trainers.push_back(
      actors::spawn_role(sys, peers.place.host_of_trainer(t), actors::trainer, std::move(tc)));
  }
  name_roles(c);
}

} // namespace runtime
