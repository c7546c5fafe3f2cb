#include "config/recovery_config.hpp"

#include <cmath>

#include "config/option_values.hpp"

namespace runtime {

void add_recovery_options(option_set& o) {
  using t = opt_type;
  o.add({"recovery.mode", t::string, "none",
         "what a lost embedding shard does: none (the job ends with an error naming it), "
         "partial (CPR: only that shard restarts from its own newest checkpoint, the others "
         "train on) or full (every role rolls back to the newest whole-cluster cut and the "
         "lost work is redone); partial and full need checkpoint.dir (docs/cpr.md)",
         {"none", "partial", "full"}});
  o.add({"cpr.policy", t::string, "full",
         "partial recovery: which rows each shard's save writes: full (all), mfu (the most "
         "updated since their last save) or ssu (chosen from a sample of the updates)",
         {"full", "mfu", "ssu"}});
  o.add({"cpr.fraction", t::real, "0.25",
         "mfu/ssu: the share of a shard's rows a partial save writes", {}, 1e-6, 1.0});
  o.add({"cpr.full-every", t::integer, "4",
         "mfu/ssu: every K-th save of a shard is a full one (0 = only the first)", {}, 0.0, 1e9});
  o.add({"cpr.ssu-sample", t::integer, "16384",
         "ssu: updates sampled per interval and shard (the memory SSU needs)", {}, 1.0, 1e9});
  o.add({"cpr.interval", t::real, "0",
         "seconds between checkpoints (virtual under sim.clock=virtual): a shard's saves "
         "(partial) or the cluster's cuts (full); 0 = 2 x cpr.target-pls x MTBF x "
         "cluster.embedding-shards (partial) or Young/Daly's sqrt(2 x save time x MTBF) (full)",
         {}, 0.0, 1e9});
  o.add({"cpr.target-pls", t::real, "0.02",
         "partial recovery: the portion of lost samples the interval is chosen for", {}, 1e-9,
         1.0});
  o.add({"cpr.mtbf", t::real, "0",
         "the mean time between shard failures, seconds, the checkpoint interval is chosen for "
         "(0 = faults.mtbf)",
         {}, 0.0, 1e12});
  o.add({"checkpoint.storage-gbps", t::real, "0.5",
         "sim.clock=virtual: the checkpoint store's bandwidth for one shard, GB/s (a shard's "
         "save and load, and with recovery.mode=full its part of a cut, take bytes / this)",
         {}, 1e-6, 1e6});
  o.add({"faults.mtbf", t::real, "0",
         "simulated cluster: embedding shard failures at exponentially distributed times with "
         "this mean, seconds of training, each of a shard drawn uniformly (seeded by model.seed; "
         "0 = none)",
         {}, 0.0, 1e12});
  o.add({"faults.time-scale", t::real, "1",
         "faults.mtbf and cpr.mtbf are multiplied by this (14 h = 50400 s x 1e-4 = 5.04 s); "
         "each product must be at most 1e9 s", {},
         1e-12, 1e12});
}

namespace {

// recovery.mode=full: the cuts' interval. Given by checkpoint.every-* (the
// caller keeps them), by cpr.interval, or Young/Daly's optimum for an
// expected save time C and MTBF M: T = sqrt(2 C M), where C is a shard's
// part of a cut over the store's bandwidth (the shards write in parallel).
std::optional<std::string> full_interval(const option_set& o, double shard_bytes,
                                         bool periodic_cuts, recovery_settings& out) {
  if (periodic_cuts)
    return std::nullopt; // interval_seconds stays 0: the cuts' own options rule
  out.interval_seconds = o.get_real("cpr.interval");
  if (out.interval_seconds > 0)
    return std::nullopt;
  if (out.mtbf_seconds <= 0)
    return "option 'recovery.mode' = full (" + o.source("recovery.mode") +
           ") needs a cut interval: set checkpoint.every-seconds or checkpoint.every-examples, "
           "cpr.interval, or an MTBF (cpr.mtbf or faults.mtbf) for Young/Daly's interval";
  out.save_estimate_seconds = shard_bytes / (out.storage_gbps * 1e9);
  out.interval_seconds = std::sqrt(2.0 * out.save_estimate_seconds * out.mtbf_seconds);
  return std::nullopt;
}

} // namespace

std::optional<std::string> build_recovery_settings(const option_set& o, cluster_mode mode,
                                                   std::size_t embedding_shards,
                                                   double shard_checkpoint_bytes,
                                                   const std::string& checkpoint_dir,
                                                   bool periodic_cuts, recovery_settings& out) {
  const auto rmode = o.get_string("recovery.mode");
  out.partial = rmode == "partial";
  out.full = rmode == "full";
  out.policy = *checkpoint::parse_cpr_policy(o.get_string("cpr.policy"));
  out.fraction = o.get_real("cpr.fraction");
  out.full_every = std::uint64_t(o.get_int("cpr.full-every"));
  out.ssu_sample = std::size_t(o.get_int("cpr.ssu-sample"));
  out.storage_gbps = o.get_real("checkpoint.storage-gbps");
  const double scale = o.get_real("faults.time-scale");
  out.faults_mtbf_seconds = o.get_real("faults.mtbf") * scale;
  out.mtbf_seconds = (o.get_real("cpr.mtbf") > 0 ? o.get_real("cpr.mtbf") * scale
                                                   : out.faults_mtbf_seconds);
  // Each factor is within its range, the product need not be: failures are
  // scheduled at virtual or wall times in nanoseconds.
  for (const char* key : {"faults.mtbf", "cpr.mtbf"}) {
    const double v = o.get_real(key) * scale;
    if (v > max_duration_seconds)
      return std::string("option '") + key + "' = " + o.value_text(key) + " x faults.time-scale = " +
             o.value_text("faults.time-scale") + " gives " + detail::format_real(v) +
             " s, more than " + detail::format_real(max_duration_seconds) +
             " s (31.7 years), the longest time a run schedules";
  }
  if (out.faults_mtbf_seconds > 0 && mode != cluster_mode::simulated)
    return "option 'faults.mtbf' (" + o.source("faults.mtbf") +
           ") applies only with cluster.mode=simulated (cluster.mode = " + to_string(mode) + ")";
  if (!out.partial && !out.full)
    return std::nullopt;
  const std::string named = "option 'recovery.mode' = " + rmode + " (" + o.source("recovery.mode") + ")";
  if (mode != cluster_mode::simulated)
    return named + " is built for cluster.mode=simulated (cluster.mode = " + to_string(mode) + ")";
  if (checkpoint_dir.empty())
    return named + (out.partial ? " needs checkpoint.dir: each embedding shard saves under "
                                  "CHECKPOINT_DIR/cpr/"
                                : " needs checkpoint.dir: the cluster's cuts go there");
  if (out.full)
    return full_interval(o, shard_checkpoint_bytes, periodic_cuts, out);
  if (periodic_cuts)
    return "options 'checkpoint.every-examples'/'checkpoint.every-seconds' take whole-cluster "
           "cuts; with recovery.mode=partial each shard saves on its own (cpr.interval): "
           "leave them 0";
  out.interval_seconds = o.get_real("cpr.interval");
  if (out.interval_seconds > 0)
    return std::nullopt;
  out.target_pls = o.get_real("cpr.target-pls");
  if (out.mtbf_seconds <= 0)
    return "option 'cpr.interval' = 0 (" + o.source("cpr.interval") +
           "): the interval comes from cpr.target-pls and an MTBF; set cpr.mtbf or faults.mtbf, "
           "or give cpr.interval in seconds";
  out.interval_seconds =
    2.0 * out.target_pls * out.mtbf_seconds * double(std::max<std::size_t>(1, embedding_shards));
  return std::nullopt;
}

} // namespace runtime
