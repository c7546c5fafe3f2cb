#include "cluster/memory_estimate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "model/dlrm.hpp"
#include "config/deploy_config.hpp"
#include "engine/input.hpp"

namespace runtime {

namespace {

// Doubles throughout: the options may be absurd (1e12 rows, 2^20 x 1024
// trainers) without overflowing.
struct shape {
  double nd, nc, dim, ex, act, rows, state, params, tables;
};

shape shape_of(const train_config& cfg) {
  const auto& a = cfg.arch;
  shape s{};
  s.nd = double(a.num_dense);
  s.nc = double(a.num_tables);
  s.dim = double(a.dim);
  s.ex = 4.0 + 4.0 * s.nd + 8.0 * s.nc; // label, dense floats, 64-bit hashes
  const double n = s.nc + 1.0, z = s.dim + n * (n - 1.0) / 2.0;
  double widths = s.nd + s.dim + n * s.dim + z + 1.0; // inputs, interaction, logit
  if (a.interaction == model::interaction_kind::dcn) // per layer x, g [D] and h [r], kept for backward
    widths += double(a.cross_layers) * (2.0 * double(a.cross_width()) + double(a.cross_rank));
  for (auto w : a.bottom_hidden)
    widths += double(w);
  for (auto w : a.top_hidden)
    widths += double(w);
  s.act = widths * 4.0;       // bytes of one example's activations
  s.rows = s.nc * s.dim * 4.0; // bytes of one example's looked-up rows
  s.state = double(cfg.train.sparse.state_per_row(a.dim));
  s.params = double(model::dlrm(a).layout().size());
  s.tables = double(a.num_tables) * double(a.rows_per_table);
  return s;
}

// The lines of a set of files: counted in the first 64 MiB, extrapolated
// beyond (x 2: a file's later lines may be shorter). A batch larger than a
// small file holds only the file's lines, so the bound matters for small
// files, where it is exact. Synthetic sets (no files) have their row count.
double rows_bound(const std::vector<std::string>& files, double synthetic_rows) {
  if (files.empty())
    return synthetic_rows;
  constexpr std::size_t budget = std::size_t(64) << 20;
  std::vector<char> buf(std::size_t(1) << 20);
  double lines = 0, scanned = 0;
  for (const auto& f : files) {
    std::FILE* in = std::fopen(f.c_str(), "rb");
    if (!in)
      continue; // checked elsewhere (check_inputs)
    bool partial = false; // a last line without '\n' counts too
    for (std::size_t n; scanned < budget && (n = std::fread(buf.data(), 1, buf.size(), in)) > 0;) {
      lines += double(std::count(buf.data(), buf.data() + n, '\n'));
      partial = buf[n - 1] != '\n';
      scanned += double(n);
    }
    lines += partial;
    std::fclose(in);
  }
  const double bytes = double(total_bytes(files));
  return scanned >= bytes || scanned == 0 ? lines : 2.0 * lines * bytes / scanned;
}

// Fields each reader's schema sizes (roles, names, field ends).
double columns_of(const data::schema_options& s) {
  if (s.num_columns > 0)
    return double(s.num_columns);
  double most = double(1 + s.dense.size() + s.categorical.size());
  for (const auto* refs : {&s.dense, &s.categorical})
    for (const auto& r : *refs)
      if (!r.by_name())
        most = std::max(most, double(r.index) + 1.0);
  return std::max(most, double(s.column_names.size()));
}

} // namespace

memory_roles whole_job(const train_config& cfg) {
  memory_roles r;
  const bool seq = cfg.cluster.mode == cluster_mode::sequential;
  r.trainers = seq ? 1 : cfg.cluster.trainers;
  r.embedding_shards = seq ? 1 : cfg.cluster.embedding_shards;
  r.dense_shards = seq ? 0 : cfg.cluster.dense_shards;
  return r;
}

memory_roles node_roles(const deploy_settings& deploy, const std::string& node) {
  memory_roles r;
  r.trainers = deploy.trainers_on(node).size();
  r.embedding_shards = deploy.embedding_shards_on(node).size();
  r.dense_shards = deploy.dense_shards_on(node).size();
  r.evaluates = node == deploy.coordinator;
  r.who = "node " + node;
  return r;
}

memory_estimate estimate_memory(const train_config& cfg) {
  return estimate_memory(cfg, whole_job(cfg));
}

memory_estimate estimate_memory(const train_config& cfg, const memory_roles& roles) {
  const shape s = shape_of(cfg);
  const bool seq = cfg.cluster.mode == cluster_mode::sequential;
  const double all_trainers = seq ? 1.0 : double(std::max<std::size_t>(1, cfg.cluster.trainers));
  const double all_shards = seq ? 1.0 : double(std::max<std::size_t>(1, cfg.cluster.embedding_shards));
  const double T = double(roles.trainers), W = seq ? 1.0 : double(cfg.cluster.workers);
  memory_estimate m;
  m.embedding_bytes = s.tables * (s.dim + s.state) * 4.0 * double(roles.embedding_shards) / all_shards;
  m.dense_bytes = s.params * 4.0 * (T * (4.0 + W) + (roles.trainers || roles.dense_shards ? 2.0 : 0.0));

  // Training batches. The reader sizes its buffer for a whole batch (or the
  // trainer's share of max-examples) before a line is read; the steps only
  // for the examples there are.
  const double B = double(cfg.train.batch_size);
  const double max_share = cfg.train.max_examples ? std::ceil(double(cfg.train.max_examples) / all_trainers) : B;
  // Parts are split by bytes: a trainer's may hold up to twice the average.
  const double rows = rows_bound(cfg.data.train, double(cfg.data.synthetic_rows));
  double examples = std::ceil(std::min(rows, 2.0 * rows / all_trainers)) * double(cfg.train.epochs);
  if (cfg.train.max_examples)
    examples = std::min(examples, max_share);
  const double b = std::max(1.0, std::min(B, examples)); // examples in one step
  const double buffer = std::min(B, max_share) * s.ex;
  // Per example of a step (calibrated against peak RSS, see the header):
  // sequential: activations and their gradients (one workspace, reused),
  // looked-up rows and their gradients, keys; a worker besides holds two
  // batches and the rows of its lookup replies.
  const double step = seq ? b * (s.act + 2.0 * s.rows + 12.0 * s.nc)
                          : W * b * (2.0 * s.ex + s.act + 3.0 * s.rows + 12.0 * s.nc);
  m.batch_bytes = T * (buffer + step);

  // Evaluation: the synthetic eval set with synthetic training data, the
  // eval files if any, else none.
  const bool has_eval = !cfg.data.eval.empty() || cfg.data.train.empty();
  const double readers = T + (roles.evaluates && has_eval ? 1.0 : 0.0);
  if (roles.evaluates && has_eval) {
    const double E = double(cfg.train.eval_batch_size);
    const double eval_rows = rows_bound(cfg.data.eval, double(cfg.data.synthetic_eval_rows));
    const double e = std::max(1.0, std::min(E, eval_rows));
    // The reader's buffer, one forward pass, and a score and label per example.
    m.eval_bytes = E * s.ex + e * (s.act + s.rows + 12.0 * s.nc) + eval_rows * 8.0;
    if (!seq) // the evaluator gathers every shard's rows into one table
      m.tables_copy_bytes = s.tables * s.dim * 4.0 * (1.0 + 1.0 / all_shards);
  }
  m.reader_bytes = readers * (double(1 << 20) + 64.0 * columns_of(cfg.data.schema));

  m.overhead_bytes = double(64 << 20) + T * double(8 << 20);

  const auto& d = cfg.dct;
  if (d.dp && !seq) {
    const double dense_here = cfg.cluster.dense_shards
                                ? double(roles.dense_shards) / double(cfg.cluster.dense_shards)
                                : 0.0;
    // EASGD's centre reply: one more picture at each end (the centre as the trainer knows it)
    const double centre = model::is_easgd(cfg.sync.algorithm) && d.dp_centre ? 1.0 : 0.0;
    m.dct_bytes += s.params * 4.0 * ((3.0 + centre) * T + (2.0 + centre) * all_trainers * dense_here);
  }
  if (d.mp && d.mp_straight && d.error_feedback && !seq) {
    const double distinct = std::min(s.tables, examples * s.nc);
    m.dct_bytes += T * W * distinct * (s.dim * 4.0 + 48.0);
  }

  // Checkpoints of the shards held here (their share of the tables).
  const double shard_share = double(roles.embedding_shards) / all_shards;
  const double shard_table_bytes = s.tables * (s.dim + s.state) * 4.0 * shard_share;
  const auto& ck = cfg.checkpoint;
  if (!seq && ck.background && (ck.every_examples > 0 || ck.every_seconds > 0 || cfg.recovery.full))
    m.checkpoint_bytes += shard_table_bytes; // copy-on-write while a cut is written
  if (!seq && cfg.recovery.partial) {
    const auto& r = cfg.recovery;
    if (r.policy == checkpoint::cpr_policy::mfu)
      m.checkpoint_bytes += 4.0 * s.tables * shard_share; // a counter per row
    if (r.policy == checkpoint::cpr_policy::ssu)
      m.checkpoint_bytes += 8.0 * double(r.ssu_sample) * double(roles.embedding_shards);
    // the rows marked changed, and a partial save's rows in one buffer
    m.checkpoint_bytes += s.tables * shard_share / 8.0 + r.fraction * shard_table_bytes;
  }
  return m;
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  double bytes = pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
  // A container's limit (cgroup v2; "max" when none).
  std::ifstream in("/sys/fs/cgroup/memory.max");
  double limit = 0;
  if (in >> limit && limit > 0 && (bytes == 0 || limit < bytes))
    bytes = limit;
  return bytes;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

std::optional<std::string> check_memory(const train_config& cfg, double available) {
  return check_memory(cfg, whole_job(cfg), available);
}

std::optional<std::string> check_memory(const train_config& cfg, const memory_roles& roles,
                                        double available) {
  const auto m = estimate_memory(cfg, roles);
  const bool limited = cfg.cluster.memory_limit_bytes > 0;
  if (limited)
    available = cfg.cluster.memory_limit_bytes;
  if (available <= 0 || m.total() <= available)
    return std::nullopt;
  const auto& a = cfg.arch;
  const auto& cl = cfg.cluster;
  const bool seq = cl.mode == cluster_mode::sequential;
  const std::string T = std::to_string(roles.trainers) + " trainer" + (roles.trainers == 1 ? "" : "s");
  const std::string W = seq ? "" : " x " + std::to_string(cl.workers) + " worker" + (cl.workers == 1 ? "" : "s");
  // The part that dominates names the key to change.
  const std::pair<double, std::string> parts[] = {
    {m.embedding_bytes + m.tables_copy_bytes, "model.rows-per-table' = " + std::to_string(a.rows_per_table)},
    {m.dense_bytes, "model.bottom / model.top / cluster.trainers"},
    {m.batch_bytes, "train.batch-size' = " + std::to_string(cfg.train.batch_size)},
    {m.eval_bytes, "train.eval-batch-size' = " + std::to_string(cfg.train.eval_batch_size)},
    {m.reader_bytes, "cluster.trainers / data.columns"},
    {m.dct_bytes, "dct.dp / dct.mp"},
    {m.checkpoint_bytes, "checkpoint.every-examples / recovery.mode / cpr.ssu-sample"}};
  const auto* top = &parts[0];
  for (const auto& p : parts)
    if (p.first > top->first)
      top = &p;
  std::string key = top->second;
  if (key.find('\'') == std::string::npos)
    key += "'";
  const std::string whose = roles.who.empty() ? "the run" : "the roles of " + roles.who;
  return "option '" + key + ": " + whose + " would need about " + human_bytes(m.total()) +
         " (batch buffers " + human_bytes(m.batch_bytes) + ": " + T + W + " x batch " +
         std::to_string(cfg.train.batch_size) + "; embedding tables " + human_bytes(m.embedding_bytes) +
         ": " + std::to_string(a.num_tables) + " tables x " + std::to_string(a.rows_per_table) +
         " rows x (dim " + std::to_string(a.dim) + " + " +
         std::to_string(cfg.train.sparse.state_per_row(a.dim)) + " optimiser floats) x 4 B; the evaluator's copy of the tables " +
         human_bytes(m.tables_copy_bytes) + "; dense replicas " +
         human_bytes(m.dense_bytes) + "; evaluation " + human_bytes(m.eval_bytes) + "; readers " +
         human_bytes(m.reader_bytes) + "; DCT " + human_bytes(m.dct_bytes) + "; checkpoints " +
         human_bytes(m.checkpoint_bytes) + "), more than " +
         (limited ? "cluster.memory-limit-gib, " + human_bytes(available)
                  : "this machine's " + human_bytes(available) + " of memory");
}

} // namespace runtime
