#include "cluster/cluster_plan.hpp"

#include "checkpoint/cpr_files.hpp"
#include "cluster/coordinator.hpp"

#include <algorithm>
#include <string>

#include "model/check.hpp"
#include "data/reader.hpp"

#include <spdlog/spdlog.h>
#include "engine/input.hpp"

namespace runtime {

bool asks_for(const train_config& cfg, fault_event::action what,
              std::optional<fault_event::role> kind) {
  return std::any_of(cfg.sim.faults.begin(), cfg.sim.faults.end(), [&](const auto& k) {
    return k.what == what && (!kind || k.kind == *kind);
  });
}

bool kills_trainers(const train_config& cfg) {
  return asks_for(cfg, fault_event::action::kill, fault_event::role::trainer);
}

placement placement_for(const train_config& cfg) {
  const auto& cl = cfg.cluster;
  return placement{cl.trainers, cl.embedding_shards, cl.dense_shards, cfg.sim.one_host};
}

std::vector<float> initial_dense(const train_config& cfg, const model::dlrm& net) {
  std::vector<float> init(net.layout().size());
  model::init_dense(net.layout(), init.data(), cfg.train.seed);
  return init;
}

actors::embedding_shard_config embedding_shard_config_for(const train_config& cfg,
                                                          std::size_t s) {
  actors::embedding_shard_config ec;
  SS_CHECK(s < cfg.cluster.embedding_shards, "embedding shard index within the count");
  ec.shard = std::uint32_t(s);
  ec.num_shards = std::uint32_t(cfg.cluster.embedding_shards);
  ec.num_tables = cfg.arch.num_tables;
  ec.rows_per_table = cfg.arch.rows_per_table;
  ec.dim = cfg.arch.dim;
  ec.optimizer = cfg.train.sparse;
  ec.seed = cfg.train.seed + 1 + s;
  ec.max_workers = std::uint32_t(cfg.cluster.trainers * cfg.cluster.workers);
  ec.dct = cfg.dct;
  if (cfg.embedding.dynamic) { // each shard its share of every table's rows
    ec.dynamic = cfg.embedding.table;
    ec.dynamic->init_rows = ec.dynamic->max_rows; // new rows' bound: the whole table's
    ec.dynamic->max_rows = std::max<std::uint64_t>(1, ec.dynamic->max_rows / ec.num_shards);
    ec.model_seed = cfg.train.seed + 1; // as the sequential engine seeds them
    ec.batch_size = cfg.train.batch_size;
  }
  if (cfg.recovery.partial) { // its own saves (the counters are the caller's)
    const auto& r = cfg.recovery;
    ec.cpr.folder = cfg.checkpoint.dir + "/cpr/" + checkpoint::cpr_folder_name(s);
    ec.cpr.policy = r.policy;
    ec.cpr.fraction = r.fraction;
    ec.cpr.full_every = r.full_every;
    ec.cpr.ssu_sample = r.ssu_sample;
    ec.cpr.interval = std::chrono::duration_cast<caf::timespan>(
      std::chrono::duration<double>(r.interval_seconds));
    ec.cpr.storage_gbps = r.storage_gbps;
  }
  if (cfg.recovery.full) { // the cuts are its checkpoints: charged like the saves
    ec.cpr.storage_gbps = cfg.recovery.storage_gbps;
    ec.cpr.charge_cuts = true;
  }
  return ec;
}

std::vector<model::range> dense_ranges_for(const train_config& cfg, std::size_t params) {
  return model::split_range(params, cfg.cluster.dense_shards);
}

actors::dense_shard_config dense_shard_config_for(const train_config& cfg,
                                                  const std::vector<float>& init,
                                                  const std::vector<model::range>& ranges,
                                                  std::size_t d) {
  actors::dense_shard_config dc;
  SS_CHECK(d < ranges.size(), "dense shard index within the ranges");
  dc.shard = std::uint32_t(d);
  dc.offset = ranges[d].offset;
  dc.initial.assign(init.begin() + std::ptrdiff_t(ranges[d].offset),
                    init.begin() + std::ptrdiff_t(ranges[d].offset + ranges[d].size));
  dc.alpha = cfg.sync.alpha;
  dc.num_trainers = std::uint32_t(cfg.cluster.trainers);
  dc.dct = cfg.dct;
  return dc;
}

std::shared_ptr<const data::input_sizes> measure_train_sizes(const train_config& cfg) {
  if (cfg.cluster.trainers < 2)
    return nullptr;
  auto sizes = data::measure_compressed_inputs(cfg.data.train);
  if (sizes.empty())
    return nullptr;
  std::uint64_t bytes = 0;
  for (const auto& [path, size] : sizes)
    bytes += size;
  spdlog::info("data.train: {} compressed file{} decompressed once to split them over {} trainers "
               "({} bytes uncompressed)",
               sizes.size(), sizes.size() == 1 ? "" : "s", cfg.cluster.trainers, bytes);
  return std::make_shared<const data::input_sizes>(std::move(sizes));
}

actors::trainer_config trainer_config_for(const train_config& cfg, std::size_t t,
                                          const std::vector<float>& init,
                                          const trainer_peers& peers) {
  const auto& cl = cfg.cluster;
  SS_CHECK(t < cl.trainers, "trainer index within the count");
  actors::trainer_config tc;
  tc.trainer = std::uint32_t(t);
  tc.workers = cl.workers;
  tc.arch = cfg.arch;
  tc.dense_opt = cfg.train.dense;
  tc.initial_params = init;
  tc.reader.options = reader_options_for(cfg, cfg.data.train, t, cl.trainers);
  tc.reader.options.known_sizes = peers.train_sizes;
  tc.reader.batch_size = cfg.train.batch_size;
  tc.reader.epochs = cfg.train.epochs;
  // An example cap M is split over the N trainers' parts: trainer t's share
  // floor((M + t) / N), and the shares sum to M exactly. A share of 0 reads
  // nothing (the reader's max_examples 0 alone would mean "all").
  if (cfg.train.max_examples > 0) {
    tc.reader.max_examples = (cfg.train.max_examples + t) / cl.trainers;
    tc.reader.read_none = tc.reader.max_examples == 0;
  }
  // Partial: a lost shard comes back (rebind). (Full: the trainers fail,
  // answering the coordinator at once, and it rolls the cluster back.)
  tc.shard_restarts = cfg.recovery.partial;
  tc.host = peers.place.host_of_trainer(t);
  tc.timeout = cl.timeout;
  tc.sync_every = model::is_foreground(cfg.sync.algorithm) ? cfg.sync.k : 0;
  tc.dynamic = cfg.embedding.dynamic;
  tc.read_ahead = cl.read_ahead;
  if (cfg.embedding.dynamic) // every table full: the most rows a push can name
    tc.mp_residual_rows = std::uint64_t(cfg.arch.num_tables) * cfg.embedding.table.max_rows;
  auto& sc = tc.syncer;
  sc.trainer = std::uint32_t(t);
  sc.num_trainers = std::uint32_t(cl.trainers);
  sc.algorithm = cfg.sync.algorithm;
  sc.merge = cfg.sync.merge;
  sc.bmuf = model::bmuf_params{cfg.sync.momentum, cfg.sync.block_lr, cfg.sync.nesterov};
  sc.min_pause = cfg.sync.min_pause;
  sc.min_gap_batches = cfg.sync.min_gap_batches;
  sc.timeout = cl.timeout;
  sc.dense_ranges = peers.dense_ranges;
  sc.dct = cfg.dct;
  if (cfg.dct.dp)
    sc.dct_origin = init; // the dense shards' centre at spawn in a fresh run
  bind_peers(tc, peers);
  return tc;
}

void bind_peers(actors::trainer_config& tc, const trainer_peers& peers) {
  tc.shards = peers.shards;
  tc.local_rows = peers.local_rows;
  tc.syncer.dense_shards = peers.dense;
}

void resume_shard(actors::embedding_shard_config& ec, const train_config& cfg,
                  const cluster_start& start) {
  ec.initial = start.tables;
  ec.initial_dynamic = start.dynamic;
  for (const auto& k : start.dynamic_counters)
    if (k.shard == ec.shard && k.num_shards == ec.num_shards)
      ec.initial_counters = k;
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

role_choice role_choice::all(const train_config& cfg) {
  const auto& cl = cfg.cluster;
  role_choice out;
  for (std::uint32_t s = 0; s < cl.embedding_shards; ++s)
    out.embedding_shards.push_back(s);
  if (model::is_easgd(cfg.sync.algorithm))
    for (std::uint32_t d = 0; d < cl.dense_shards; ++d)
      out.dense_shards.push_back(d);
  for (std::uint32_t t = 0; t < cl.trainers; ++t)
    out.trainers.push_back(t);
  out.reform_on_loss = kills_trainers(cfg);
  return out;
}

role_configs configure_roles(const train_config& cfg, const model::dlrm& net,
                             const cluster_start* start, const role_choice& which) {
  role_configs out;
  out.place = placement_for(cfg);
  out.init = start ? start->params : initial_dense(cfg, net);
  for (auto s : which.embedding_shards) {
    auto ec = embedding_shard_config_for(cfg, s);
    if (start)
      resume_shard(ec, cfg, *start);
    if (cfg.cluster.local_rows) // the shard attaches its tables; the workers use them
      ec.local = std::make_shared<actors::hogwild_rows>(ec.num_shards, ec.optimizer);
    out.embedding_shards.push_back(std::move(ec));
  }
  out.dense_ranges = dense_ranges_for(cfg, out.init.size());
  for (auto d : which.dense_shards)
    out.dense_shards.push_back(
      dense_shard_config_for(cfg, start ? start->centre : out.init, out.dense_ranges, d));
  trainer_peers peers; // the handles come at spawn (bind_peers)
  peers.place = out.place;
  peers.dense_ranges = out.dense_ranges;
  if (which.trainers.size() > 1) // one trainer measures what it reads itself
    peers.train_sizes = measure_train_sizes(cfg);
  for (auto t : which.trainers) {
    auto tc = trainer_config_for(cfg, t, out.init, peers);
    tc.syncer.reform_on_loss = which.reform_on_loss;
    if (start)
      resume_trainer(tc, cfg, *start, t);
    out.trainers.push_back(std::move(tc));
  }
  return out;
}

} // namespace runtime
