#include "report/metrics_page.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace runtime {

namespace {

// Appends families and samples; every sample gets the page's base labels.
class page_writer {
public:
  explicit page_writer(const metrics_snapshot& s) {
    base_ = "role=\"" + escape_label_value(s.role) + "\"";
    if (!s.node.empty())
      base_ += ",node=\"" + escape_label_value(s.node) + "\"";
  }

  void family(const char* name, const char* type, const char* help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  // `extra`: further labels, e.g. kind="push" (already escaped).
  void sample(const char* name, std::uint64_t v, const std::string& extra = "") {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRIu64, v);
    line(name, buf, extra);
  }
  void sample(const char* name, double v, const std::string& extra = "") {
    char buf[40];
    if (std::isnan(v))
      std::snprintf(buf, sizeof buf, "NaN");
    else if (std::isinf(v))
      std::snprintf(buf, sizeof buf, v > 0 ? "+Inf" : "-Inf");
    else
      std::snprintf(buf, sizeof buf, "%.17g", v);
    line(name, buf, extra);
  }
  // One family of one sample.
  template <class T>
  void one(const char* name, const char* type, const char* help, T v) {
    family(name, type, help);
    sample(name, v);
  }
  std::string take() { return std::move(out_); }

private:
  void line(const char* name, const char* value, const std::string& extra) {
    out_ += name;
    out_ += '{';
    out_ += base_;
    if (!extra.empty()) {
      out_ += ',';
      out_ += extra;
    }
    out_ += "} ";
    out_ += value;
    out_ += '\n';
  }
  std::string base_, out_;
};

std::string kind(const char* k) { return std::string("kind=\"") + k + "\""; }

std::string label(const char* name, std::size_t v) {
  return std::string(name) + "=\"" + std::to_string(v) + "\"";
}

// Bytes by kind and by shard, per-trainer counters; DCT bytes only while
// no final metrics replace them (`with_dct`).
void live_families(page_writer& w, const progress_sample& live, bool with_dct) {
  w.family("shadowsync_bytes_total", "counter",
           "Payload bytes moved while training: embedding rows looked up, embedding gradients "
           "pushed, dense sync.");
  w.sample("shadowsync_bytes_total", live.lookup_bytes, kind("lookup"));
  w.sample("shadowsync_bytes_total", live.push_bytes, kind("push"));
  w.sample("shadowsync_bytes_total", live.sync_bytes, kind("dense_sync"));
  if (!live.shard_lookup_bytes.empty() || !live.shard_push_bytes.empty()) {
    w.family("shadowsync_shard_bytes_total", "counter",
             "Embedding payload bytes by embedding shard: rows looked up from it, gradients "
             "pushed to it.");
    for (std::size_t i = 0; i < live.shard_lookup_bytes.size(); ++i)
      w.sample("shadowsync_shard_bytes_total", live.shard_lookup_bytes[i],
               label("shard", i) + "," + kind("lookup"));
    for (std::size_t i = 0; i < live.shard_push_bytes.size(); ++i)
      w.sample("shadowsync_shard_bytes_total", live.shard_push_bytes[i],
               label("shard", i) + "," + kind("push"));
  }
  if (!live.trainers.empty()) {
    w.family("shadowsync_trainer_examples_total", "counter", "Training examples of each trainer.");
    for (const auto& t : live.trainers)
      w.sample("shadowsync_trainer_examples_total", t.examples, label("trainer", t.trainer));
    w.family("shadowsync_trainer_sync_rounds_total", "counter",
             "Completed sync rounds of each trainer's syncer.");
    for (const auto& t : live.trainers)
      w.sample("shadowsync_trainer_sync_rounds_total", t.sync_rounds,
               label("trainer", t.trainer));
  }
  if (with_dct && (live.dct_sync_bytes > 0 || live.dct_embedding_bytes > 0)) {
    w.family("shadowsync_dct_bytes_total", "counter",
             "Payload bytes that DCT sent: on the dense sync (dct.dp) and on the embedding "
             "traffic (dct.mp).");
    if (live.dct_sync_bytes > 0)
      w.sample("shadowsync_dct_bytes_total", live.dct_sync_bytes, kind("dense_sync"));
    if (live.dct_embedding_bytes > 0)
      w.sample("shadowsync_dct_bytes_total", live.dct_embedding_bytes, kind("embedding"));
  }
}

void final_families(page_writer& w, const run_metrics& m) {
  if (m.eval) {
    w.one("shadowsync_eval_ne", "gauge", "Normalised entropy on the eval set (lower is better).",
          m.eval->ne);
    w.one("shadowsync_eval_auc", "gauge", "AUC on the eval set.", m.eval->auc);
    w.one("shadowsync_eval_examples_total", "counter", "Eval examples scored.",
          std::uint64_t(m.eval->examples));
    // data.user: GAUC where some user had both classes (else no sample).
    if (m.eval->grouped && m.eval->gauc.counted > 0) {
      w.one("shadowsync_eval_gauc", "gauge",
            "Group AUC on the eval set: the impression-weighted mean of per-user AUCs over the "
            "users with both classes (data.user).",
            m.eval->gauc.gauc);
      w.one("shadowsync_eval_gauc_users", "gauge", "Users with both classes, in the GAUC.",
            m.eval->gauc.counted);
    }
  }
  if (!m.trainer_examples_per_second.empty()) {
    w.family("shadowsync_trainer_examples_per_second", "gauge",
             "Training examples per second of each trainer over the run.");
    for (std::size_t t = 0; t < m.trainer_examples_per_second.size(); ++t)
      w.sample("shadowsync_trainer_examples_per_second", m.trainer_examples_per_second[t],
               "trainer=\"" + std::to_string(t) + "\"");
  }
  if (m.mode != "sequential") {
    w.family("shadowsync_link_bytes_total", "counter",
             "Payload bytes by link kind over the run: embedding rows (lookup), embedding "
             "gradients (push), dense sync.");
    w.sample("shadowsync_link_bytes_total", m.bytes.lookup, kind("lookup"));
    w.sample("shadowsync_link_bytes_total", m.bytes.push, kind("push"));
    w.sample("shadowsync_link_bytes_total", m.bytes.dense_sync, kind("dense_sync"));
  }
  if (m.dct || m.dct_mp) {
    w.family("shadowsync_dct_bytes_total", "counter",
             "Payload bytes that DCT sent: on the dense sync (dct.dp) and on the embedding "
             "traffic (dct.mp).");
    if (m.dct)
      w.sample("shadowsync_dct_bytes_total", m.dct->bytes, kind("dense_sync"));
    if (m.dct_mp)
      w.sample("shadowsync_dct_bytes_total", m.dct_mp->bytes(), kind("embedding"));
  }
  if (const auto& d = m.embedding) { // model.embedding=dynamic, at the end of training
    w.family("shadowsync_embedding_rows", "gauge", "Rows of each dynamic embedding table.");
    for (std::size_t t = 0; t < d->rows.size(); ++t)
      w.sample("shadowsync_embedding_rows", double(d->rows[t]),
               "table=\"" + std::to_string(t) + "\"");
    w.one("shadowsync_embedding_admissions_total", "counter",
          "Ids given a row in the dynamic tables.", d->admissions);
    w.one("shadowsync_embedding_evictions_total", "counter",
          "Rows evicted from the dynamic tables (least used, or unseen for embedding.ttl).",
          d->evictions);
    w.family("shadowsync_embedding_missing_lookups_total", "counter",
             "Lookups of ids without a row (they read zeros), in training and evaluation.");
    w.sample("shadowsync_embedding_missing_lookups_total", d->missing, kind("train"));
    w.sample("shadowsync_embedding_missing_lookups_total", d->eval_missing, kind("eval"));
  }
  if (m.checkpoint) {
    w.family("shadowsync_checkpoints_total", "counter",
             "Checkpoints written while training: whole-cluster cuts and shard saves.");
    w.sample("shadowsync_checkpoints_total", m.checkpoint->cuts, kind("cut"));
    w.sample("shadowsync_checkpoints_total", m.checkpoint->shard_saves, kind("shard_save"));
    w.one("shadowsync_checkpoint_bytes_total", "counter", "Checkpoint bytes written.",
          m.checkpoint->bytes);
  }
  if (m.recovery) {
    w.one("shadowsync_recovery_failures_total", "counter",
          "Embedding shards lost and recovered (recovery.mode=partial).", m.recovery->failures);
    w.one("shadowsync_recovery_loads_total", "counter", "Shard checkpoints reloaded.",
          m.recovery->loads);
    if (m.recovery->saves_counted)
      w.one("shadowsync_recovery_saves_total", "counter", "The embedding shards' own saves.",
            m.recovery->saves);
  }
  w.family("shadowsync_failures_total", "counter",
           "Failures during training: trainers lost (the job went on without them) and "
           "injected faults carried out.");
  w.sample("shadowsync_failures_total", std::uint64_t(m.lost_trainers.size()),
           kind("trainer_lost"));
  w.sample("shadowsync_failures_total", std::uint64_t(m.faults.size()), kind("fault_injected"));
  w.one("shadowsync_malformed_lines_total", "counter", "Malformed training lines skipped.",
        m.malformed_lines);
  w.one("shadowsync_cut_bags_total", "counter",
        "Multi-hot training bags cut to data.max-ids (not strict).", m.cut_bags);
}

} // namespace

std::string escape_label_value(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string prometheus_text(const metrics_snapshot& s) {
  page_writer w(s);
  const run_metrics* fin = s.final_metrics ? &*s.final_metrics : nullptr;
  w.one("shadowsync_training_finished", "gauge",
        "1 once training (and evaluation) ended, else 0.", fin ? 1.0 : 0.0);
  if (!s.live && !fin)
    return w.take();
  // The final figures where known (they are the last progress sample's, or
  // more exact), else the latest progress sample's.
  const progress_sample live = s.live ? *s.live : progress_sample{};
  const std::uint64_t examples = fin ? fin->examples : live.examples;
  w.one("shadowsync_examples_total", "counter", "Training examples done, summed over trainers.",
        examples);
  const std::optional<double> vsec =
    fin && fin->sim ? std::optional<double>(fin->seconds) : live.virtual_seconds;
  double rate = 0;
  if (fin)
    rate = fin->examples_per_second();
  else if (double span = vsec ? *vsec : s.live_wall_seconds; span > 0)
    rate = double(examples) / span;
  w.one("shadowsync_examples_per_second", "gauge",
        "Training examples per second since the start, summed over trainers (per virtual "
        "second under the virtual clock).",
        rate);
  if (vsec)
    w.one("shadowsync_virtual_seconds_total", "counter",
          "Virtual seconds of training (sim.clock=virtual).", *vsec);
  const std::optional<double> train_ne =
    fin ? (fin->examples ? std::optional<double>(fin->train_ne) : std::nullopt) : live.train_ne;
  if (train_ne)
    w.one("shadowsync_train_ne", "gauge",
          "Progressive normalised entropy of the examples trained on (lower is better).",
          *train_ne);
  const std::uint64_t rounds = fin ? fin->sync.rounds : live.sync_rounds;
  w.one("shadowsync_sync_rounds_total", "counter", "Completed sync rounds, summed over trainers.",
        rounds);
  const std::optional<double> gap = fin ? fin->sync.sync_gap_mean : live.sync_gap;
  if (gap)
    w.one("shadowsync_sync_gap_batches", "gauge", "Mean batches between a trainer's sync rounds.",
          *gap);
  const std::optional<double> blocked =
    fin ? std::optional<double>(fin->sync.worker_blocked_fraction) : live.blocked_fraction;
  if (blocked)
    w.one("shadowsync_sync_blocked_ratio", "gauge",
          "Share of the workers' time blocked on foreground sync rounds.", *blocked);
  if (s.live)
    live_families(w, live, !fin);
  if (fin)
    final_families(w, *fin);
  return w.take();
}

} // namespace runtime
