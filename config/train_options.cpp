#include "config/train_config.hpp"

#include "config/option_values.hpp"

namespace runtime {

namespace {

void add(option_set& o, std::string key, opt_type t, std::string def, std::string help,
         std::vector<std::string> choices = {}, std::optional<double> min = std::nullopt,
         std::optional<double> max = std::nullopt) {
  o.add(option_spec{std::move(key), t, std::move(def), std::move(help), std::move(choices), min,
                    max});
}

constexpr auto b = opt_type::boolean;
constexpr auto i = opt_type::integer;
constexpr auto r = opt_type::real;
constexpr auto s = opt_type::string;
constexpr auto l = opt_type::string_list;

} // namespace

void add_train_options(option_set& o) {
  // [data]
  add(o, "data.train", l, "[]",
      "training files, read in order; empty = generate the default synthetic set");
  add(o, "data.eval", l, "[]", "held-out files; empty = synthetic eval set (or none with data.train)");
  add(o, "data.format", s, "criteo", "input layout: criteo TSV or a delimited schema",
      {"criteo", "delimited"});
  add(o, "data.delimiter", s, "tab", "delimited: field separator, one character or 'tab'");
  add(o, "data.header", b, "false", "delimited: the first line of each file names the columns");
  const std::string most = std::to_string(data::max_columns);
  add(o, "data.label", s, "0",
      "delimited: label column, 0-based index (0.." + std::to_string(data::max_columns - 1) +
        ") or header name");
  add(o, "data.dense", l, "[]", "delimited: dense (numeric) columns, indices (< " + most + ") or names");
  add(o, "data.categorical", l, "[]",
      "delimited: categorical columns, indices (< " + most + ") or names");
  add(o, "data.user", s, "",
      "the column naming each example's user, 0-based index or name (Criteo: label, I1..I13, "
      "C1..C26); set: eval also reports GAUC. Empty = none");
  {
    // Added after checkpoints existed: left out of saved configurations while
    // at their defaults, so those keep their bytes.
    auto quiet = [&](std::string key, opt_type t, std::string def, std::string help,
                     std::vector<std::string> choices = {}, std::optional<double> min = std::nullopt,
                     std::optional<double> max = std::nullopt) {
      option_spec spec{std::move(key), t, std::move(def), std::move(help), std::move(choices), min, max};
      spec.omit_default_from_ini = true;
      o.add(spec);
    };
    quiet("data.multi-hot", l, "[]",
          "categorical columns whose field is a bag of ids (indices or names, e.g. C1,C21; Criteo and "
          "delimited); empty field = empty bag. Empty = none");
    quiet("data.id-delimiter", s, "|", "data.multi-hot: the character between the ids of a bag");
    quiet("data.max-ids", i, "1024",
          "data.multi-hot: most ids a bag keeps; longer bags are cut and counted (refused with data.strict)",
          {}, 1, 1e7);
  }
  add(o, "data.columns", i, "0",
      "delimited: most fields per line, at most " + most +
        " (0 = header width / highest column); a header may have at most " + most + " fields",
      {}, 0, double(data::max_columns));
  add(o, "data.strict", b, "false", "stop at the first malformed line instead of skipping it");
  add(o, "data.max-logged-errors", i, "5", "malformed lines reported individually", {}, 0, 1e6);
  add(o, "data.synthetic-rows", i, "1000000", "rows of the default synthetic training set", {}, 1);
  add(o, "data.synthetic-eval-rows", i, "100000", "rows of the default synthetic eval set", {}, 1);
  add(o, "data.synthetic-seed", i, "1", "sample seed of the synthetic training set (eval: +1)", {}, 0);
  add(o, "data.teacher-seed", i, "42", "teacher seed shared by synthetic train and eval sets", {}, 0);
  add(o, "data.synthetic-dir", s, "out/synthetic", "where the default synthetic data is generated and reused");
  // [model]
  add(o, "model.arch", s, "small", "architecture preset", model::preset_names());
  add(o, "model.bottom", s, "", "bottom MLP hidden widths, e.g. 512-256-64 (empty = preset)");
  add(o, "model.top", s, "", "top MLP hidden widths, e.g. 512-256 (empty = preset)");
  add(o, "model.dim", i, "0", "embedding width (0 = preset: 16, dlrm-dcnv2 128)", {}, 0, 4096);
  add(o, "model.interaction", s, "preset",
      "how the bottom output and the embeddings meet: dot (DLRM's pairwise dot products), dcn "
      "(DCNv2's low-rank cross layers), or the preset's",
      {"preset", "dot", "dcn"});
  add(o, "model.cross-layers", i, "-1", "dcn: cross layers (-1 = preset: 3)", {}, -1, 64);
  add(o, "model.cross-rank", i, "0", "dcn: rank of each cross layer (0 = preset: dlrm-dcnv2 512, others 64)", {}, 0, 65536);
  {
    option_spec pooling{"model.pooling", s, "sum",
                        "data.multi-hot: a bag's vector is the sum or the mean of its ids' rows (an empty bag: zeros)",
                        {"sum", "mean"}};
    pooling.omit_default_from_ini = true; // added after checkpoints existed: their bytes stay
    o.add(pooling);
  }
  add(o, "model.rows-per-table", i, "100000", "hash buckets per embedding table", {}, 1, 1e12);
  add(o, "model.seed", i, "1", "seed of the parameter initialisation", {}, 0);
  // [train]
  add(o, "train.batch-size", i, "0",
      "examples per mini-batch of each worker (0 = auto: 128, and with more than 4 trainers "
      "4096 / cluster.trainers^2, at most 128 and at least 16)",
      {}, 0, 1 << 20);
  add(o, "train.epochs", i, "1", "passes over the training data (CTR practice: one)", {}, 1, 1000);
  add(o, "train.max-examples", i, "0", "stop after this many training examples (0 = all)", {}, 0);
  add(o, "train.eval-batch-size", i, "4096", "examples per evaluation batch", {}, 1, 1 << 22);
  add(o, "train.dense-optimizer", s, "adagrad",
      "optimiser of the MLP weights (count: a test instrument that only counts updates)",
      {"adagrad", "sgd", "count"});
  std::string preset_rates;
  for (const auto& name : model::preset_names())
    preset_rates += (preset_rates.empty() ? "" : ", ") + name + " " +
                    detail::format_real(*model::preset_dense_lr(name));
  add(o, "train.dense-lr", r, "-1",
      "learning rate of the dense optimiser (-1 = the preset's: " + preset_rates + ")", {}, -1.0);
  add(o, "train.dense-warmup", i, "0",
      "examples over which the dense learning rate ramps linearly from 0 (each trainer's "
      "first ones; 0 = no warm-up)", {}, 0);
  add(o, "train.sparse-optimizer", s, "rowwise-adagrad",
      "optimiser of the embedding rows (count: a test instrument that only counts updates)",
      {"rowwise-adagrad", "adagrad", "sgd", "count"});
  add(o, "train.sparse-lr", r, "0.03", "learning rate of the sparse optimiser", {}, 0.0);
  add(o, "train.adagrad-eps", r, "1e-8", "Adagrad epsilon (dense and row-wise)", {}, 0.0);
  // [cluster]
  add(o, "cluster.mode", s, "simulated",
      "simulated: the whole actor cluster in one process; sequential: one thread, no actors",
      {"simulated", "sequential"});
  add(o, "cluster.trainers", i, "2", "trainers (each with its own dense replica)", {}, 1, 1024);
  add(o, "cluster.workers", i, "1", "Hogwild workers per trainer", {}, 1, 256);
  add(o, "cluster.embedding-shards", i, "2", "embedding parameter shards", {}, 1, 1024);
  add(o, "cluster.dense-shards", i, "0",
      "dense (EASGD centre) shards; 0 = derived: under EASGD one per 4 trainers, rounded up "
      "(one centre for 16 trainers is busy the whole pass and each exchange waits), with "
      "dct.dp above 4 trainers one per trainer, else 1",
      {}, 0, 1024);
  add(o, "cluster.timeout-ms", i, "30000",
      "timeout of every request between actors, at most one day (86400000)", {}, 1,
      max_timeout_ms);
  add(o, "cluster.local-rows", b, "false",
      "workers read and write the embedding shards' rows directly (Hogwild, no lookup or push "
      "messages); simulated mode on the wall clock without net, dct.mp, recovery, cuts or faults");
  add(o, "cluster.read-ahead", b, "false",
      "each Hogwild worker asks its reader for the batch after next while it trains, so the "
      "batch is parsed on a core no worker uses: 1 trainer x 1 worker on 2 cores 1.12x (0.97-1.16), "
      "but 3-5 % slower where the workers keep every core busy (docs/RESULTS.md section 2b)");
  add(o, "cluster.memory-limit-gib", r, "0",
      "memory the run's up-front estimate (every buffer an option sizes) must fit in, GiB; "
      "0 = the machine's (physical memory, or the cgroup's memory.max when lower); more than "
      "that is refused, naming the option to change",
      {}, 0.0, 1e9);
  add(o, "scheduler.max-threads", i, "0", "CAF scheduler threads (0 = hardware cores)", {}, 0, 1024);
  add(o, "scheduler.max-throughput", i, "-1",
      "messages an actor handles in one turn on a scheduler thread before the thread takes "
      "the next job (0 = CAF's default: all its mailbox holds). 1 lets a shadow syncer's ring "
      "hops and a foreground round's replies in between a worker's messages: more rounds, "
      "shorter barrier waits (docs/virtual-time.md, \"The scheduler's turns\"). -1 = derived: "
      "1 with sync.algorithm none, fr-ma or fr-bmuf and more than one worker in all (faster "
      "there), else 0 (a shadow syncer takes what the workers leave)",
      {}, -1, 1000000);
  add(o, "scheduler.policy", s, "stealing",
      "CAF scheduler: work stealing (fast) or one shared, mutex-protected queue (lets "
      "ThreadSanitizer see every hand-over between threads; used by the TSan tests)",
      {"stealing", "sharing"});
  // [sync]
  add(o, "sync.algorithm", s, "s-easgd", "dense synchronisation between trainers",
      {"none", "s-easgd", "s-ma", "s-bmuf", "fr-easgd", "fr-ma", "fr-bmuf"});
  add(o, "sync.k", i, "10", "foreground methods: batches between rounds, per worker", {}, 1);
  add(o, "sync.alpha", r, "0.25",
      "EASGD elasticity alpha: an exchange moves the replica and the centre this share of "
      "their difference, whatever the number of trainers (0 = 0.25)",
      {}, 0.0, 1.0);
  add(o, "sync.momentum", r, "-1", "BMUF block momentum eta (negative = min(1 - 1/trainers, 0.5))", {}, -1.0, 1.0);
  add(o, "sync.block-lr", r, "1", "BMUF block learning rate zeta", {}, 0.0);
  add(o, "sync.nesterov", b, "true", "BMUF: Nesterov target w_g + eta Delta (false: classic w_g)");
  add(o, "sync.merge", s, "delta", "MA/BMUF merge: delta keeps updates made during a round, overwrite drops them",
      {"delta", "overwrite"});
  add(o, "sync.min-pause-ms", i, "0", "shadow methods: pause between rounds, at most one hour",
      {}, 0, max_pause_ms);
  add(o, "sync.min-gap-batches", i, "-1",
      "shadow methods: a round starts only after the trainer completed this many batches since "
      "the previous one started (0 = back to back even on an unchanged replica). -1 = derived: "
      "3 under s-bmuf without dct.dp (block momentum on a round every batch lost eval NE at 4, 8 "
      "and 16 trainers, docs/RESULTS.md 4b), else 1",
      {}, -1);
  add(o, "sync.eval-model", s, "auto",
      "dense parameters evaluated: average of replicas, trainer0's, or the EASGD centre "
      "(auto: trainer0 for none, average otherwise)",
      {"auto", "average", "trainer0", "centre"});
  // [net]
  add(o, "net.enabled", b, "false",
      "simulated cluster: delay every message between hosts by a NIC model (latency, bandwidth, "
      "queueing at sender and receiver); trainer t on host t, embedding shard s on host "
      "trainers + s, dense shard d after those");
  add(o, "net.latency-us", r, "20", "network model: one-way latency per message, microseconds",
      {}, 0.0, 1e9);
  add(o, "net.bandwidth-gbps", r, "25", "network model: bandwidth of each host's NIC per direction, Gbit/s",
      {}, 1e-6, 1e6);
  add(o, "net.dilation", r, "0",
      "network model: time dilation, every network delay times this factor so each host keeps its "
      "real compute-to-network ratio; simulated ex/s = wall ex/s x dilation "
      "(0 = auto: max(1, trainers x workers / scheduler threads); else >= 1)", {}, 0.0, 1e6);
  // [output]
  add(o, "output.metrics", s, "", "write the final metrics JSON object to this path");
  add(o, "output.config", s, "", "write the configuration actually used (after overrides) as INI to this path");
  add(o, "output.dir", s, "",
      "run folder (created if missing): metrics.json, timeline.csv (a row every "
      "output.timeline-seconds) and config.ini (the configuration used; reproduces the run)");
  add(o, "output.timeline-seconds", r, "1", "interval of timeline.csv rows (with output.dir)", {},
      0.01, 1e6);
  add(o, "output.metrics-port", i, "0",
      "serve /metrics (Prometheus text format) on this TCP port while the run lasts (0 = off)", {},
      0, 65535);
  add(o, "output.metrics-address", s, "127.0.0.1",
      "address the /metrics endpoint listens on (with output.metrics-port)");
  add_display_options(o);
  add_checkpoint_options(o); // [checkpoint], output.model
  add_sim_options(o);        // [sim]
  add_recovery_options(o);   // [recovery], [cpr], faults.mtbf
  add_dct_options(o);        // [dct]
  add_embedding_options(o);  // model.embedding, [embedding]
}

void add_display_options(option_set& o) {
  add(o, "output.progress", s, "auto",
      "progress display: live line on a terminal, plain periodic lines otherwise",
      {"auto", "live", "plain", "none"});
  add(o, "output.progress-seconds", r, "5", "interval of plain progress lines (at most 1e6)", {},
      0.1, 1e6);
  add(o, "output.log-level", s, "info", "log verbosity", {"trace", "debug", "info", "warn", "error"});
}

} // namespace runtime
