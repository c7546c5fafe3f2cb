#include "cluster/cluster_plan.hpp"

#include "checkpoint/cpr_files.hpp"

#include <algorithm>
#include <string>

#include "model/check.hpp"
#include "data/reader.hpp"

#include <spdlog/spdlog.h>
#include "engine/input.hpp"

namespace runtime {

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
  tc.shards = peers.shards;
  tc.local_rows = peers.local_rows;
  // Partial: a lost shard comes back (rebind). (Full: the trainers fail,
  // answering the coordinator at once, and it rolls the cluster back.)
  tc.shard_restarts = cfg.recovery.partial;
  tc.host = peers.place.host_of_trainer(t);
  tc.timeout = cl.timeout;
  tc.sync_every = model::is_foreground(cfg.sync.algorithm) ? cfg.sync.k : 0;
  tc.dynamic = cfg.embedding.dynamic;
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
  sc.dense_shards = peers.dense;
  sc.dense_ranges = peers.dense_ranges;
  sc.dct = cfg.dct;
  if (cfg.dct.dp)
    sc.dct_origin = init; // the dense shards' centre at spawn in a fresh run
  return tc;
}

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
