#include "config/train_config.hpp"

#include <algorithm>
#include <thread>

#include "config/option_values.hpp"

namespace runtime {

namespace {

// Standard input ("-") is read once, by one reader (data/byte_stream.hpp):
// refused here, naming the option, where a run would read it twice.
std::optional<std::string> check_stdin(const train_config& c, bool sequential) {
  const auto count = [](const std::vector<std::string>& l) { return std::count(l.begin(), l.end(), "-"); };
  const auto train = count(c.data.train), eval = count(c.data.eval);
  if (train + eval > 1)
    return std::string("options 'data.train' and 'data.eval' name standard input ('-') ") +
           std::to_string(train + eval) + " times: it can be read once; expected '-' once at most";
  if (train && c.train.epochs > 1)
    return "option 'train.epochs' = " + std::to_string(c.train.epochs) +
           ": data.train reads standard input ('-'), which can be read once; expected train.epochs = 1";
  if (train && !sequential && c.cluster.trainers > 1)
    return "option 'cluster.trainers' = " + std::to_string(c.cluster.trainers) +
           ": data.train reads standard input ('-'), which one reader reads once and cannot split "
           "among trainers; expected cluster.trainers = 1 or cluster.mode = sequential";
  return std::nullopt;
}

} // namespace

const char* to_string(cluster_mode m) {
  return m == cluster_mode::sequential ? "sequential" : "simulated";
}

const char* to_string(eval_model m) {
  switch (m) {
    case eval_model::average: return "average";
    case eval_model::trainer0: return "trainer0";
    case eval_model::centre: return "centre";
    case eval_model::automatic: break;
  }
  return "auto";
}

namespace {

// model.*: the preset, then the options that change it; the input's schema
// gives the dense inputs and the tables.
std::optional<std::string> build_model_settings(const option_set& o,
                                                const data::schema_options& schema,
                                                train_config& c) {
  c.arch_name = o.get_string("model.arch");
  c.arch = *model::preset(c.arch_name);
  for (auto [key, field] : {std::pair{"model.bottom", &c.arch.bottom_hidden},
                            std::pair{"model.top", &c.arch.top_hidden}}) {
    const auto& text = o.get_string(key);
    if (text.empty())
      continue;
    auto w = model::parse_widths(text);
    if (!w)
      return std::string("option '") + key + "' = '" + text +
             "': expected hidden widths like 512-256 (positive integers joined by '-')";
    *field = *w;
  }
  if (o.get_int("model.dim") > 0)
    c.arch.dim = static_cast<std::size_t>(o.get_int("model.dim"));
  if (const auto& kind = o.get_string("model.interaction"); kind != "preset") {
    const auto want = kind == "dcn" ? model::interaction_kind::dcn : model::interaction_kind::dot;
    if (want == model::interaction_kind::dcn && c.arch.interaction != want) {
      c.arch.cross_layers = 3; // a dot preset made dcn: MLPerf's depth, a rank for its width
      c.arch.cross_rank = 64;
    }
    c.arch.interaction = want;
  }
  if (o.get_int("model.cross-layers") >= 0 || o.get_int("model.cross-rank") > 0) {
    if (c.arch.interaction != model::interaction_kind::dcn)
      return std::string("option '") +
             (o.get_int("model.cross-layers") >= 0 ? "model.cross-layers" : "model.cross-rank") +
             "': cross layers need model.interaction=dcn (model " + c.arch_name + " with interaction dot)";
    if (o.get_int("model.cross-layers") >= 0)
      c.arch.cross_layers = static_cast<std::size_t>(o.get_int("model.cross-layers"));
    if (o.get_int("model.cross-rank") > 0)
      c.arch.cross_rank = static_cast<std::size_t>(o.get_int("model.cross-rank"));
  }
  c.arch.rows_per_table = static_cast<std::uint64_t>(o.get_int("model.rows-per-table"));
  c.arch.pooling = o.get_string("model.pooling") == "mean" ? model::pooling_kind::mean
                                                            : model::pooling_kind::sum;
  c.arch.num_dense = schema.dense.size();
  c.arch.num_tables = schema.categorical.size();
  return std::nullopt;
}

// train.*: batch, passes, optimisers (a dense rate of -1 is the preset's).
std::optional<std::string> build_train_settings(const option_set& o, const std::string& arch_name,
                                                train_settings& t) {
  t.batch_size = static_cast<std::size_t>(o.get_int("train.batch-size"));
  t.epochs = static_cast<std::size_t>(o.get_int("train.epochs"));
  t.max_examples = static_cast<std::uint64_t>(o.get_int("train.max-examples"));
  t.seed = static_cast<std::uint64_t>(o.get_int("model.seed"));
  t.eval_batch_size = static_cast<std::size_t>(o.get_int("train.eval-batch-size"));
  t.dense.kind = *model::parse_dense_optimizer(o.get_string("train.dense-optimizer"));
  const double dense_lr = o.get_real("train.dense-lr");
  if (dense_lr < 0 && dense_lr != -1)
    return "option 'train.dense-lr' = " + o.value_text("train.dense-lr") + " (" +
           o.source("train.dense-lr") + "): expected a rate >= 0, or -1 for the preset's";
  t.dense.lr = static_cast<float>(dense_lr >= 0 ? dense_lr : *model::preset_dense_lr(arch_name));
  t.dense.warmup = static_cast<std::uint64_t>(o.get_int("train.dense-warmup"));
  t.sparse.kind = *model::parse_sparse_optimizer(o.get_string("train.sparse-optimizer"));
  t.sparse.lr = static_cast<float>(o.get_real("train.sparse-lr"));
  t.dense.eps = t.sparse.eps = static_cast<float>(o.get_real("train.adagrad-eps"));
  return std::nullopt;
}

// cluster.* and scheduler.*; a batch size of 0 is derived from the trainers.
std::optional<std::string> build_cluster_settings(const option_set& o, train_config& c) {
  auto& t = c.train;
  c.cluster.mode = o.get_string("cluster.mode") == "sequential" ? cluster_mode::sequential
                                                               : cluster_mode::simulated;
  c.cluster.trainers = std::size_t(o.get_int("cluster.trainers"));
  if (t.batch_size == 0)
    t.batch_size = auto_batch_size(c.cluster.mode, c.cluster.trainers);
  c.cluster.workers = std::size_t(o.get_int("cluster.workers"));
  c.cluster.embedding_shards = std::size_t(o.get_int("cluster.embedding-shards"));
  c.cluster.dense_shards = std::size_t(o.get_int("cluster.dense-shards"));
  c.cluster.timeout = std::chrono::milliseconds(o.get_int("cluster.timeout-ms"));
  c.cluster.local_rows = o.get_bool("cluster.local-rows");
  c.cluster.read_ahead = o.get_bool("cluster.read-ahead");
  if (auto e = check_stdin(c, c.cluster.mode == cluster_mode::sequential))
    return e;
  c.cluster.memory_limit_bytes = o.get_real("cluster.memory-limit-gib") * double(1ull << 30);
  c.cluster.max_threads = std::size_t(o.get_int("scheduler.max-threads"));
  const auto turn = o.get_int("scheduler.max-throughput"); // -1: build_train_config derives it
  c.cluster.max_throughput = turn >= 0 ? std::size_t(turn) : 0;
  c.cluster.scheduler = o.get_string("scheduler.policy") == "sharing" ? scheduler_policy::sharing
                                                                   : scheduler_policy::stealing;
  return std::nullopt;
}

// sync.*: alpha and momentum default from the number of trainers.
std::optional<std::string> build_sync_settings(const option_set& o, std::size_t trainers,
                                               sync_settings& y) {
  y.algorithm = *model::parse_sync_algorithm(o.get_string("sync.algorithm"));
  y.k = std::uint64_t(o.get_int("sync.k"));
  const float n = float(trainers);
  // A shadow exchange is one trainer's alone: 0.5 / N, the EASGD paper's
  // pull for N synchronous workers, weakens it as N grows and the replicas
  // drift apart at 16 and 64 trainers (docs/RESULTS.md 4c); a fixed 0.25 is
  // the same at 2 trainers and no worse at 4 and 8.
  y.alpha = o.get_real("sync.alpha") > 0 ? float(o.get_real("sync.alpha")) : 0.25f;
  // 1 - 1/N, the BMUF paper's, amplifies a block's step by N: too far for
  // the short blocks of a shadow round, whose replicas kept training
  // meanwhile (docs/RESULTS.md, quality at scale); capped at 2x.
  y.momentum = o.get_real("sync.momentum") >= 0 ? float(o.get_real("sync.momentum"))
                                                : std::min(0.5f, 1.0f - 1.0f / n);
  y.block_lr = float(o.get_real("sync.block-lr"));
  y.nesterov = o.get_bool("sync.nesterov");
  y.merge = *model::parse_merge_mode(o.get_string("sync.merge"));
  y.min_pause = std::chrono::milliseconds(o.get_int("sync.min-pause-ms"));
  // BMUF's block momentum amplifies each round's change; on a round every
  // batch that was worse than every third at 4, 8 and 16 trainers
  // (docs/RESULTS.md 4b). MA and EASGD keep a round every batch, and so does
  // S-BMUF under dct.dp: a round there passes a fixed share of its entries,
  // and every third batch lost 0.44 points on average at 16 trainers
  // (docs/RESULTS.md 4b).
  const auto gap = o.get_int("sync.min-gap-batches");
  const bool bmuf_gap = y.algorithm == model::sync_algorithm::s_bmuf && !o.get_bool("dct.dp");
  y.min_gap_batches = gap >= 0 ? std::uint64_t(gap) : bmuf_gap ? 3u : 1u;
  const std::string em = o.get_string("sync.eval-model");
  y.eval_model = em == "average"    ? eval_model::average
                 : em == "trainer0" ? eval_model::trainer0
                 : em == "centre"   ? eval_model::centre
                                    : eval_model::automatic;
  if (y.eval_model == eval_model::centre && !model::is_easgd(y.algorithm))
    return "option 'sync.eval-model' = 'centre': only EASGD methods have a centre variable (sync.algorithm = " +
           o.get_string("sync.algorithm") + ")";
  return std::nullopt;
}

// net.*: the network model, only in the simulated cluster.
std::optional<std::string> build_net_settings(const option_set& o, cluster_mode mode,
                                              net_settings& net) {
  net.enabled = o.get_bool("net.enabled");
  net.latency_us = o.get_real("net.latency-us");
  net.bandwidth_gbps = o.get_real("net.bandwidth-gbps");
  net.dilation = o.get_real("net.dilation");
  if (net.dilation > 0 && net.dilation < 1)
    return "option 'net.dilation' = " + o.value_text("net.dilation") +
           ": expected 0 (auto) or a factor >= 1";
  if (net.enabled && mode != cluster_mode::simulated)
    return "option 'net.enabled' (" + o.source("net.enabled") +
           ") applies only with cluster.mode=simulated (cluster.mode = " +
           to_string(mode) + ")";
  return std::nullopt;
}

// output.*
std::optional<std::string> build_output_settings(const option_set& o, output_settings& out) {
  out.metrics = o.get_string("output.metrics");
  out.config = o.get_string("output.config");
  out.dir = o.get_string("output.dir");
  out.timeline_seconds = o.get_real("output.timeline-seconds");
  out.metrics_port = std::uint16_t(o.get_int("output.metrics-port"));
  out.metrics_address = o.get_string("output.metrics-address");
  if (out.metrics_port != 0 && out.metrics_address.empty())
    return "option 'output.metrics-address' is empty: expected an address to listen on, e.g. "
           "127.0.0.1 (with output.metrics-port = " + o.value_text("output.metrics-port") + ")";
  out.progress = o.get_string("output.progress");
  out.progress_seconds = o.get_real("output.progress-seconds");
  out.log_level = o.get_string("output.log-level");
  return std::nullopt;
}

// recovery.*, cpr.*, faults.mtbf from each shard's bytes; full recovery's
// cuts every interval when no periodic checkpoint is set.
std::optional<std::string> build_recovery(const option_set& o, bool periodic, train_config& c) {
  const auto& a = c.arch;
  const double shard_bytes = double(a.num_tables) * double(a.rows_per_table) *
                             double(a.dim + c.train.sparse.state_per_row(a.dim)) * sizeof(float) /
                             double(std::max<std::size_t>(1, c.cluster.embedding_shards));
  if (auto e = build_recovery_settings(o, c.cluster.mode, c.cluster.embedding_shards, shard_bytes,
                                       c.checkpoint.dir, periodic, c.recovery))
    return e;
  if (c.recovery.interval_seconds > max_duration_seconds) // derived: T = f(cpr.*, MTBF)
    return "option 'cpr.interval' = 0: the interval derived from cpr.target-pls, the MTBF and the "
           "shards' save time is " + detail::format_real(c.recovery.interval_seconds) +
           " s, more than " + detail::format_real(max_duration_seconds) +
           " s (31.7 years); give cpr.interval in seconds";
  if (c.recovery.full && !periodic) // full recovery: cuts every interval
    c.checkpoint.every_seconds = c.recovery.interval_seconds;
  return std::nullopt;
}

} // namespace

std::size_t derived_max_throughput(model::sync_algorithm a, std::size_t trainers,
                                   std::size_t workers) {
  using model::sync_algorithm;
  // A worker's turn held the shard's replies and a ring round's hops behind
  // its queued messages: with a message a turn, no sync ran 1.02-1.06x (1x2,
  // 1x4, 4x1) and FR-MA and FR-BMUF 1.07x on 2 cores. Not with one worker
  // alone (1x1: 0.95x, its handoffs buy nothing), nor for the shadow methods
  // (S-MA 0.91x, S-EASGD 0.96-0.98x: their syncers then take turns the
  // workers would have had) or FR-EASGD's one exchange a round (0.99x).
  const bool ring_or_none =
    a == sync_algorithm::none || a == sync_algorithm::fr_ma || a == sync_algorithm::fr_bmuf;
  return ring_or_none && trainers * workers >= 2 ? 1 : 0;
}

std::optional<std::string> build_train_config(const option_set& o, train_config& c,
                                              config_use use) {
  if (auto e = build_data_settings(o, use == config_use::train, c.data))
    return e;
  if (auto e = build_model_settings(o, c.data.schema, c))
    return e;
  if (auto e = build_train_settings(o, c.arch_name, c.train))
    return e;
  if (auto e = build_cluster_settings(o, c))
    return e;
  if (auto e = build_sync_settings(o, c.cluster.trainers, c.sync))
    return e;
  if (o.get_int("scheduler.max-throughput") < 0)
    c.cluster.max_throughput =
      derived_max_throughput(c.sync.algorithm, c.cluster.trainers, c.cluster.workers);
  if (auto e = build_dct_settings(o, c.cluster.mode, c.sync.algorithm, c.dct))
    return e;
  if (c.dct.mp_refresh == 0)
    c.dct.mp_refresh = auto_mp_refresh(c.train.batch_size);
  if (c.cluster.dense_shards == 0)
    c.cluster.dense_shards =
      auto_dense_shards(c.cluster.trainers, model::is_easgd(c.sync.algorithm), c.dct.dp);
  if (c.dct.per_layer)
    c.dct.layer_starts = dct_layer_starts(c.arch);
  if (auto e = build_net_settings(o, c.cluster.mode, c.net))
    return e;
  if (auto e = build_output_settings(o, c.output))
    return e;
  if (auto e = build_sim_settings(o, c.cluster.mode, c.sim))
    return e;
  if (auto e = build_checkpoint_settings(o, c.cluster.mode, c.checkpoint))
    return e;
  if (auto e = build_embedding_settings(o, c.cluster.mode == cluster_mode::sequential,
                                        c.arch.rows_per_table, c.embedding))
    return e;
  const bool periodic = c.checkpoint.every_examples > 0 || c.checkpoint.every_seconds > 0;
  if (auto e = build_recovery(o, periodic, c))
    return e;
  return check_local_rows(c, periodic);
}

std::optional<std::string> check_local_rows(const train_config& c, bool periodic) {
  if (!c.cluster.local_rows)
    return std::nullopt;
  const char* why = nullptr;
  if (c.cluster.mode != cluster_mode::simulated)
    why = "cluster.mode=simulated";
  else if (c.sim.virtual_clock)
    why = "sim.clock=wall (the virtual clock charges lookups and pushes)";
  else if (c.net.enabled)
    why = "net.enabled=false (the network model delays lookups and pushes)";
  else if (c.dct.mp)
    why = "dct.mp=false (DCT thresholds lookups and pushes)";
  else if (c.recovery.partial || c.recovery.full)
    why = "recovery.mode=none (recovery restarts shards and tracks their pushes)";
  else if (periodic)
    why = "no checkpoint.every-* (cuts align the shards on their pushes)";
  else if (!c.sim.faults.empty())
    why = "no faults.* (faults act on messages and roles)";
  if (!why)
    return std::nullopt;
  return std::string{"option 'cluster.local-rows' = true needs "} + why;
}

double effective_dilation(const train_config& c) {
  if (c.net.dilation > 0)
    return c.net.dilation;
  return std::max(1.0,
                  double(c.cluster.trainers * c.cluster.workers) / double(scheduler_threads(c)));
}

std::size_t auto_batch_size(cluster_mode mode, std::size_t trainers) {
  if (mode == cluster_mode::sequential || trainers <= 4)
    return 128;
  // One round of batches, trainers x batch, holds 4096 / trainers examples
  // (512 at 8 trainers, 256 at 16), at most 128 and at least 16 a worker.
  const std::size_t batch = 4096 / (trainers * trainers);
  return std::clamp<std::size_t>(batch, 16, 128);
}

std::size_t auto_dense_shards(std::size_t trainers, bool easgd, bool dct_dp) {
  if (!easgd)
    return 1;
  if (dct_dp && trainers > 4)
    return trainers;
  return std::max<std::size_t>(1, (trainers + 3) / 4);
}

std::size_t scheduler_threads(const train_config& c) {
  if (c.cluster.max_threads > 0)
    return c.cluster.max_threads;
  return hardware_cores();
}

std::size_t hardware_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

} // namespace runtime
