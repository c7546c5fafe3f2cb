#include "config/train_config.hpp"

#include <algorithm>
#include <thread>

#include "data/reader.hpp"
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

// Opens the files once with the schema: existence, readability, header and
// column names are checked here, before anything is built.
std::optional<std::string> check_inputs(const std::vector<std::string>& files,
                                        const data::schema_options& schema, const char* key) {
  if (files.empty())
    return std::nullopt;
  data::reader_options ro;
  ro.files = files;
  ro.schema = schema;
  std::string err;
  if (!data::reader::open(ro, &err))
    return std::string("option '") + key + "': " + err;
  return std::nullopt;
}

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

// A column given by index must be below data::max_columns: refused here,
// naming the key, before a reader sizes a schema by it.
std::optional<std::string> check_column_index(const option_set& o, const char* key,
                                              const std::vector<data::column_ref>& refs) {
  for (const auto& ref : refs)
    if (!ref.by_name() && ref.index >= data::max_columns)
      return std::string("option '") + key + "' = " + o.value_text(key) + " (" + o.source(key) +
             "): column index " + ref.describe() + " is out of range, expected 0.." +
             std::to_string(data::max_columns - 1) + " (a line has at most " +
             std::to_string(data::max_columns) + " fields)";
  return std::nullopt;
}

// data.multi-hot, data.id-delimiter, data.max-ids into the schema; without a
// header the columns are checked now, naming the key.
std::optional<std::string> set_multi_hot_columns(const option_set& o, data::schema_options& schema) {
  const auto list = o.get_list("data.multi-hot");
  if (list.empty())
    return std::nullopt;
  const std::string key = "option 'data.multi-hot' = " + o.value_text("data.multi-hot") + " (" +
                          o.source("data.multi-hot") + "): ";
  for (const auto& x : list)
    schema.multi_hot.push_back(data::column_ref::parse(x));
  if (auto e = check_column_index(o, "data.multi-hot", schema.multi_hot))
    return e;
  std::string delim = o.get_string("data.id-delimiter");
  if (delim == "tab" || delim == "\\t")
    delim = "\t";
  if (delim.size() != 1 || delim[0] == schema.delimiter || delim[0] == '\n' || delim[0] == '\r')
    return "option 'data.id-delimiter' = '" + o.get_string("data.id-delimiter") + "' (" +
           o.source("data.id-delimiter") +
           "): expected one character other than the field delimiter and the line end";
  schema.id_delimiter = delim[0];
  schema.max_ids = static_cast<std::size_t>(o.get_int("data.max-ids"));
  data::resolved_schema resolved;
  std::string err;
  if (!schema.header && !data::resolve_schema(schema, nullptr, "", &resolved, &err))
    return key + err.substr(std::min(err.find("multi-hot (data.multi-hot)"), err.size()));
  return std::nullopt;
}

} // namespace

std::optional<std::string> set_user_column(const std::string& text, const std::string& source,
                                           data::schema_options& schema) {
  const auto ref = data::column_ref::parse(text);
  const std::string key = "option 'data.user' = '" + text + "' (" + source + "): ";
  if (!ref.by_name() && ref.index >= data::max_columns)
    return key + "column index " + ref.describe() + " is out of range, expected 0.." +
           std::to_string(data::max_columns - 1);
  schema.user = ref;
  // Without a header the layout is known now: a mistyped name or index is
  // refused before any file (or synthetic set) is read.
  data::resolved_schema with_user, without_user;
  auto plain = schema;
  plain.user.reset();
  std::string err;
  if (!schema.header && data::resolve_schema(plain, nullptr, "", &without_user, &err) &&
      !data::resolve_schema(schema, nullptr, "", &with_user, &err))
    return key + err.substr(std::min(err.find("user (data.user)"), err.size()));
  return std::nullopt;
}

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
      "512 / cluster.trainers, at least 32)",
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
  add(o, "cluster.dense-shards", i, "1", "dense (EASGD centre) shards", {}, 1, 1024);
  add(o, "cluster.timeout-ms", i, "30000",
      "timeout of every request between actors, at most one day (86400000)", {}, 1,
      max_timeout_ms);
  add(o, "cluster.local-rows", b, "false",
      "workers read and write the embedding shards' rows directly (Hogwild, no lookup or push "
      "messages); simulated mode on the wall clock without net, dct.mp, recovery, cuts or faults");
  add(o, "cluster.memory-limit-gib", r, "0",
      "memory the run's up-front estimate (every buffer an option sizes) must fit in, GiB; "
      "0 = the machine's (physical memory, or the cgroup's memory.max when lower); more than "
      "that is refused, naming the option to change",
      {}, 0.0, 1e9);
  add(o, "scheduler.max-threads", i, "0", "CAF scheduler threads (0 = hardware cores)", {}, 0, 1024);
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
  add(o, "sync.min-gap-batches", i, "1",
      "shadow methods: a round starts only after the trainer completed this many batches since "
      "the previous one started (0 = back to back even on an unchanged replica)", {}, 0);
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

std::optional<std::string> build_train_config(const option_set& o, train_config& c,
                                              config_use use) {
  auto& d = c.data;
  d.train = o.get_list("data.train");
  d.eval = o.get_list("data.eval");
  d.strict = o.get_bool("data.strict");
  d.max_logged_errors = static_cast<std::size_t>(o.get_int("data.max-logged-errors"));
  d.synthetic_rows = static_cast<std::uint64_t>(o.get_int("data.synthetic-rows"));
  d.synthetic_eval_rows = static_cast<std::uint64_t>(o.get_int("data.synthetic-eval-rows"));
  d.synthetic_seed = static_cast<std::uint64_t>(o.get_int("data.synthetic-seed"));
  d.teacher_seed = static_cast<std::uint64_t>(o.get_int("data.teacher-seed"));
  d.synthetic_dir = o.get_string("data.synthetic-dir");

  const char* schema_keys[] = {"data.delimiter", "data.header", "data.label",
                               "data.dense",     "data.categorical", "data.columns"};
  if (o.get_string("data.format") == "criteo") {
    option_set defaults; // a saved effective config sets every key: compare values
    add_train_options(defaults);
    for (const char* k : schema_keys)
      if (o.value_text(k) != defaults.value_text(k))
        return std::string("option '") + k + "' (" + o.source(k) +
               ") applies only with data.format=delimited";
    d.schema = data::schema_options::criteo();
  } else {
    data::schema_options sc;
    std::string delim = o.get_string("data.delimiter");
    if (delim == "tab" || delim == "\\t")
      delim = "\t";
    if (delim.size() != 1)
      return "option 'data.delimiter' = '" + o.get_string("data.delimiter") +
             "': expected one character or 'tab'";
    sc.delimiter = delim[0];
    sc.header = o.get_bool("data.header");
    sc.label = data::column_ref::parse(o.get_string("data.label"));
    for (const auto& x : o.get_list("data.dense"))
      sc.dense.push_back(data::column_ref::parse(x));
    for (const auto& x : o.get_list("data.categorical"))
      sc.categorical.push_back(data::column_ref::parse(x));
    if (auto e = check_column_index(o, "data.label", {sc.label}))
      return e;
    if (auto e = check_column_index(o, "data.dense", sc.dense))
      return e;
    if (auto e = check_column_index(o, "data.categorical", sc.categorical))
      return e;
    if (sc.categorical.empty())
      return "option 'data.categorical': data.format=delimited needs at least one categorical column";
    sc.num_columns = static_cast<std::size_t>(o.get_int("data.columns"));
    d.schema = sc;
    if (d.train.empty() && use == config_use::train)
      return "option 'data.train': data.format=delimited needs training files (synthetic data is Criteo-shaped)";
  }

  if (auto e = set_multi_hot_columns(o, d.schema))
    return e;
  if (const auto& user = o.get_string("data.user"); !user.empty())
    if (auto e = set_user_column(user, o.source("data.user"), d.schema))
      return e;

  if (auto err = check_inputs(d.train, d.schema, "data.train"))
    return err;
  if (auto err = check_inputs(d.eval, d.schema, "data.eval"))
    return err;

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
  c.arch.num_dense = d.schema.dense.size();
  c.arch.num_tables = d.schema.categorical.size();

  auto& t = c.train;
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
  t.dense.lr = static_cast<float>(dense_lr >= 0 ? dense_lr : *model::preset_dense_lr(c.arch_name));
  t.sparse.kind = *model::parse_sparse_optimizer(o.get_string("train.sparse-optimizer"));
  t.sparse.lr = static_cast<float>(o.get_real("train.sparse-lr"));
  t.dense.eps = t.sparse.eps = static_cast<float>(o.get_real("train.adagrad-eps"));

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
  if (auto e = check_stdin(c, c.cluster.mode == cluster_mode::sequential))
    return e;
  c.cluster.memory_limit_bytes = o.get_real("cluster.memory-limit-gib") * double(1ull << 30);
  c.cluster.max_threads = std::size_t(o.get_int("scheduler.max-threads"));
  c.cluster.scheduler = o.get_string("scheduler.policy") == "sharing" ? scheduler_policy::sharing
                                                                   : scheduler_policy::stealing;
  auto& y = c.sync;
  y.algorithm = *model::parse_sync_algorithm(o.get_string("sync.algorithm"));
  y.k = std::uint64_t(o.get_int("sync.k"));
  const float n = float(c.cluster.trainers);
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
  y.min_gap_batches = std::uint64_t(o.get_int("sync.min-gap-batches"));
  const std::string em = o.get_string("sync.eval-model");
  y.eval_model = em == "average"    ? eval_model::average
                 : em == "trainer0" ? eval_model::trainer0
                 : em == "centre"   ? eval_model::centre
                                    : eval_model::automatic;
  if (y.eval_model == eval_model::centre && !model::is_easgd(y.algorithm))
    return "option 'sync.eval-model' = 'centre': only EASGD methods have a centre variable (sync.algorithm = " +
           o.get_string("sync.algorithm") + ")";
  if (auto e = build_dct_settings(o, c.cluster.mode, y.algorithm, c.dct))
    return e;
  auto& net = c.net;
  if (c.dct.per_layer)
    c.dct.layer_starts = dct_layer_starts(c.arch);
  net.enabled = o.get_bool("net.enabled");
  net.latency_us = o.get_real("net.latency-us");
  net.bandwidth_gbps = o.get_real("net.bandwidth-gbps");
  net.dilation = o.get_real("net.dilation");
  if (net.dilation > 0 && net.dilation < 1)
    return "option 'net.dilation' = " + o.value_text("net.dilation") +
           ": expected 0 (auto) or a factor >= 1";
  if (net.enabled && c.cluster.mode != cluster_mode::simulated)
    return "option 'net.enabled' (" + o.source("net.enabled") +
           ") applies only with cluster.mode=simulated (cluster.mode = " +
           to_string(c.cluster.mode) + ")";
  c.output.metrics = o.get_string("output.metrics");
  c.output.config = o.get_string("output.config");
  c.output.dir = o.get_string("output.dir");
  c.output.timeline_seconds = o.get_real("output.timeline-seconds");
  c.output.metrics_port = std::uint16_t(o.get_int("output.metrics-port"));
  c.output.metrics_address = o.get_string("output.metrics-address");
  if (c.output.metrics_port != 0 && c.output.metrics_address.empty())
    return "option 'output.metrics-address' is empty: expected an address to listen on, e.g. "
           "127.0.0.1 (with output.metrics-port = " + o.value_text("output.metrics-port") + ")";
  c.output.progress = o.get_string("output.progress");
  c.output.progress_seconds = o.get_real("output.progress-seconds");
  c.output.log_level = o.get_string("output.log-level");
  if (auto e = build_sim_settings(o, c.cluster.mode, c.sim))
    return e;
  if (auto e = build_checkpoint_settings(o, c.cluster.mode, c.checkpoint))
    return e;
  if (auto e = build_embedding_settings(o, c.cluster.mode == cluster_mode::sequential,
                                        c.arch.rows_per_table, c.embedding))
    return e;
  const auto& a = c.arch;
  const double shard_bytes = double(a.num_tables) * double(a.rows_per_table) *
                             double(a.dim + c.train.sparse.state_per_row(a.dim)) * sizeof(float) /
                             double(std::max<std::size_t>(1, c.cluster.embedding_shards));
  const bool periodic = c.checkpoint.every_examples > 0 || c.checkpoint.every_seconds > 0;
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
  return std::max<std::size_t>(32, 512 / trainers);
}

std::size_t scheduler_threads(const train_config& c) {
  if (c.cluster.max_threads > 0)
    return c.cluster.max_threads;
  return hardware_cores();
}

std::size_t hardware_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

} // namespace runtime
