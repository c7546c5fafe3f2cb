#include "runtime/recovery_config.hpp"

namespace runtime {

void add_recovery_options(option_set& o) {
  using t = opt_type;
  o.add({"recovery.mode", t::string, "none",
         "what a lost embedding shard does: none (the job ends with an error naming it) or "
         "partial (CPR: only that shard restarts from its own newest checkpoint, the others "
         "train on; needs checkpoint.dir; docs/cpr.md)",
         {"none", "partial"}});
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
         "partial recovery: seconds between a shard's saves (virtual under sim.clock=virtual); "
         "0 = 2 x cpr.target-pls x MTBF x cluster.embedding-shards",
         {}, 0.0, 1e9});
  o.add({"cpr.target-pls", t::real, "0.02",
         "partial recovery: the portion of lost samples the interval is chosen for", {}, 1e-9,
         1.0});
  o.add({"cpr.mtbf", t::real, "0",
         "partial recovery: the mean time between shard failures, seconds, the interval is "
         "chosen for (0 = faults.mtbf)",
         {}, 0.0, 1e12});
  o.add({"checkpoint.storage-gbps", t::real, "0.5",
         "sim.clock=virtual: the checkpoint store's bandwidth for one shard, GB/s (a shard's "
         "save and load take bytes / this)",
         {}, 1e-6, 1e6});
  o.add({"faults.mtbf", t::real, "0",
         "simulated cluster: embedding shard failures at exponentially distributed times with "
         "this mean, seconds of training, each of a shard drawn uniformly (seeded by model.seed; "
         "0 = none)",
         {}, 0.0, 1e12});
  o.add({"faults.time-scale", t::real, "1",
         "faults.mtbf and cpr.mtbf are multiplied by this (14 h = 50400 s x 1e-4 = 5.04 s)", {},
         1e-12, 1e12});
}

std::optional<std::string> build_recovery_settings(const option_set& o, const std::string& mode,
                                                   std::size_t embedding_shards,
                                                   const std::string& checkpoint_dir,
                                                   bool periodic_cuts, recovery_settings& out) {
  out.partial = o.get_string("recovery.mode") == "partial";
  out.policy = *checkpoint::parse_cpr_policy(o.get_string("cpr.policy"));
  out.fraction = o.get_real("cpr.fraction");
  out.full_every = std::uint64_t(o.get_int("cpr.full-every"));
  out.ssu_sample = std::size_t(o.get_int("cpr.ssu-sample"));
  out.storage_gbps = o.get_real("checkpoint.storage-gbps");
  const double scale = o.get_real("faults.time-scale");
  out.faults_mtbf_seconds = o.get_real("faults.mtbf") * scale;
  out.mtbf_seconds = (o.get_real("cpr.mtbf") > 0 ? o.get_real("cpr.mtbf") * scale
                                                   : out.faults_mtbf_seconds);
  if (out.faults_mtbf_seconds > 0 && mode != "simulated")
    return "option 'faults.mtbf' (" + o.source("faults.mtbf") +
           ") applies only with cluster.mode=simulated (cluster.mode = " + mode + ")";
  if (!out.partial)
    return std::nullopt;
  if (mode != "simulated")
    return "option 'recovery.mode' = partial (" + o.source("recovery.mode") +
           ") is built for cluster.mode=simulated (cluster.mode = " + mode + ")";
  if (checkpoint_dir.empty())
    return "option 'recovery.mode' = partial (" + o.source("recovery.mode") +
           ") needs checkpoint.dir: each embedding shard saves under CHECKPOINT_DIR/cpr/";
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
