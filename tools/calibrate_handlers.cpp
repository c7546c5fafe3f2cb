// A handler's fixed cost where the roles' handlers run (sim.message-us;
// tools/calibration_record.hpp): a short job of the run's roles on the
// virtual clock with sim.cost=measured, each handler's thread CPU time
// against what the model, at the constants just measured, prices the same
// handler; the difference over the handlers is what each costs beyond its
// counted work, and the spread of each handler's time around its price is
// the run-to-run variation a model run draws (sim.jitter). Each job
// alternates with the same job under dct.mp (the dct.* defaults, whatever
// the calibrated configuration sets): the worker's and the embedding
// shard's extra time there over the model's extra price scales the
// one-core probes' dct.mp prices (sim/calibrate_job.hpp).
#include "tools/calibration_record.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>
#include <thread>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "config/option_values.hpp"
#include "report/output_files.hpp"
#include "sim/calibrate_job.hpp"
#include "sim/calibrate_timing.hpp"

#include "cluster/cluster.hpp"
#include "data/synthetic.hpp"
#include "report/progress.hpp"
#include "report/run_metrics.hpp"

namespace tools {

namespace {

// Removes the job's scratch file (and a data file's metadata) on every way out.
struct scratch_file {
  std::string path;
  ~scratch_file() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    std::filesystem::remove(path + ".meta.json", ec);
  }
};

std::string scratch_path(const std::string& what, const std::string& ext) {
  return (std::filesystem::temp_directory_path() /
          ("ss-calibrate-" + what + "-" + std::to_string(::getpid()) + ext))
    .string();
}

// Restores spdlog's level: the job's own progress lines are not calibrate's.
struct quiet_log {
  spdlog::level::level_enum was = spdlog::get_level();
  quiet_log() { spdlog::set_level(spdlog::level::warn); }
  ~quiet_log() { spdlog::set_level(was); }
};

// The job's configuration from its options.
std::optional<std::string> job_config(const std::vector<std::string>& args,
                                      runtime::train_config& cfg) {
  runtime::option_set opts;
  runtime::add_train_options(opts);
  if (auto e = opts.parse(args))
    return "calibrate: the handlers' job: " + *e;
  if (auto e = runtime::build_train_config(opts, cfg))
    return "calibrate: the handlers' job: " + *e;
  return std::nullopt;
}

// The job, quietly; `measured`: it must have run with measured costs.
std::optional<std::string> run_job(const runtime::train_config& cfg, runtime::run_metrics& m,
                                   bool measured = true) {
  {
    quiet_log quiet;
    runtime::progress_reporter progress("none", 1.0, "calibrate");
    if (auto e = runtime::run_simulated(cfg, progress, m))
      return "calibrate: the handlers' job failed: " + *e;
  }
  if (measured && (!m.sim || !m.sim->measured))
    return std::string("calibrate: the handlers' job ran without measured costs");
  return std::nullopt;
}

double examples_per_second(const runtime::train_config& cfg, std::optional<std::string>& err) {
  runtime::run_metrics m;
  err = run_job(cfg, m, false);
  return err ? 0.0 : m.examples_per_second();
}

// sim.core-contention as the job ran for real: the job on the wall clock
// with this machine's cores (the median of contention_jobs runs), then the
// same job on the virtual clock at c's constants (`constants`, a file of
// them) and a contention that each step sets to contention x the virtual
// examples/s over the real ones (the rate falls about as 1 / contention),
// from the dense probe's, within [1, max_contention]: below the probe's where
// the machine ran the real job faster than the constants say (the rates
// move by 20 % from minute to minute on a shared VM). Sets
// c.core_contention and the real and the last virtual examples/s.
std::optional<std::string> fit_contention(const std::vector<std::string>& common,
                                          const std::string& constants, unsigned cores,
                                          runtime::calibration& c) {
  auto wall = common;
  wall.push_back("--sim.clock=wall");
  runtime::train_config real_cfg;
  if (auto e = job_config(wall, real_cfg))
    return e;
  std::vector<double> real;
  std::optional<std::string> err;
  for (int run = 0; run < contention_jobs; ++run) {
    real.push_back(examples_per_second(real_cfg, err));
    if (err)
      return err;
  }
  c.contention_real_eps = runtime::calibrate_detail::median_of(real);
  double contention = c.core_contention;
  for (int step = 0; step < contention_steps; ++step) {
    auto args = common;
    for (const std::string& o : std::vector<std::string>
         {"--sim.clock=virtual", "--sim.placement=one-host",
          "--sim.cores-per-host=" + std::to_string(cores), "--sim.calibration=" + constants,
          "--sim.core-contention=" + runtime::detail::format_real(contention)})
      args.push_back(o);
    runtime::train_config cfg;
    if (auto e = job_config(args, cfg))
      return e;
    c.contention_virtual_eps = examples_per_second(cfg, err);
    if (err)
      return err;
    if (!(c.contention_real_eps > 0) || !(c.contention_virtual_eps > 0))
      break;
    contention = std::clamp(contention * c.contention_virtual_eps / c.contention_real_eps,
                            1.0, max_contention);
  }
  c.core_contention = contention;
  return std::nullopt;
}

} // namespace

std::optional<std::string> measure_handler_cost(const runtime::train_config& base,
                                                runtime::calibration& c) {
  scratch_file data{scratch_path("job", ".tsv")};
  data::synthetic_options so;
  so.rows = handler_job_rows;
  std::string err;
  data::generate_result gr;
  if (!data::generate_synthetic(so, data.path, &gr, &err))
    return "calibrate: the handlers' job: " + err;
  // The validation suite's S-EASGD job on one host of this machine's cores:
  // readers, Hogwild workers, embedding shards, shadow syncers, a dense
  // shard and the trainers. Contention 1: the model's price has none, so
  // the CPU time is compared as it was spent. The constants go to the job
  // as a calibration file, as a run reads them.
  scratch_file constants{scratch_path("constants", ".json")};
  if (!runtime::write_replacing(constants.path,
                                runtime::calibration_json(calibration_record_of(c, base, "")),
                                &err))
    return "calibrate: the handlers' job: " + err;
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::string> common = {
    "--model.arch=" + base.arch_name,
    "--train.batch-size=" + std::to_string(base.train.batch_size),
    "--data.train=" + data.path, "--data.eval=", "--cluster.trainers=2",
    "--cluster.embedding-shards=2", "--sync.algorithm=s-easgd", "--output.progress=none"};
  auto args = common;
  for (const std::string& o : std::vector<std::string>
       {"--sim.clock=virtual", "--sim.placement=one-host",
        "--sim.cores-per-host=" + std::to_string(cores), "--sim.cost=measured",
        "--sim.calibration=" + constants.path, "--sim.core-contention=1", "--sim.jitter=0"})
    args.push_back(o);
  runtime::train_config cfg, mp_cfg;
  if (auto e = job_config(args, cfg))
    return e;
  args.push_back("--dct.mp=true"); // the same job with dct.mp (the suite's DCT mp row)
  if (auto e = job_config(args, mp_cfg))
    return e;
  // handler_jobs jobs of each, alternated, the median of their gaps: one
  // job's thread CPU times move by a few us a handler with the machine.
  std::vector<runtime::run_metrics> plain(handler_jobs), with_mp(handler_jobs);
  std::vector<double> dense_scales, spreads;
  for (int job = 0; job < handler_jobs; ++job) {
    auto& m = plain[std::size_t(job)];
    if (auto e = run_job(cfg, m))
      return e;
    if (auto e = run_job(mp_cfg, with_mp[std::size_t(job)]))
      return e;
    double weight = 0, variance = 0;
    for (const auto& [role, r] : m.sim->busy_by_role) {
      // The spread: each role's around its own mean (the gap below is the
      // mean's), pooled by the roles' priced time.
      weight += r.ratio_weight;
      variance += r.ratio_weight * r.cost_cv() * r.cost_cv();
    }
    spreads.push_back(weight > 0 ? std::sqrt(variance / weight) : 0.0);
    const auto w = m.sim->busy_by_role.find("hogwild-worker");
    dense_scales.push_back(w == m.sim->busy_by_role.end()
                             ? 1.0
                             : runtime::dense_scale(w->second, c.message_us));
  }
  // The dense rate as the job's workers stepped (the GEMM probe alone read
  // 191-267 GFLOP/s minutes apart on the AMD EPYC VM; issue 38), then each
  // handler's gap at that rate.
  using runtime::calibrate_detail::median_of;
  c.gflops_probe = c.gflops;
  c.dense_job_scale = median_of(dense_scales);
  std::vector<double> gaps, worker_scales, shard_scales;
  double handlers = 0;
  for (int job = 0; job < handler_jobs; ++job) {
    const auto& m = plain[std::size_t(job)];
    const auto& mp = with_mp[std::size_t(job)];
    const double gap_s = runtime::handler_gap(*m.sim, c.message_us, c.dense_job_scale, &handlers);
    if (handlers <= 0)
      return std::string("calibrate: the handlers' job ran no handler");
    gaps.push_back(1e6 * gap_s);
    worker_scales.push_back(runtime::mp_scale(m, mp, "hogwild-worker", c.message_us, gap_s));
    shard_scales.push_back(runtime::mp_scale(m, mp, "embedding-shard", c.message_us, gap_s));
  }
  c.gflops = c.gflops_probe / c.dense_job_scale;
  c.handler_job_cost_cv = median_of(spreads);
  // u uniform in [-1, 1) has a standard deviation of 1 / sqrt(3); sim.jitter
  // takes at most 0.9.
  c.jitter = std::min(0.9, std::sqrt(3.0) * c.handler_job_cost_cv);
  c.handler_job_gap_us = median_of(gaps);
  c.handler_job_handlers = std::uint64_t(handlers);
  // The dct.mp prices as the job spent them: the one-core probes time the
  // push, the reply and the decode in tight loops, with the caches theirs
  // alone; in a run a worker's batch and the other roles' handlers come
  // between (issue 38: on the AMD EPYC VM the worker's factor was 1.2-2.9).
  c.mp_worker_scale = median_of(worker_scales);
  c.mp_shard_scale = median_of(shard_scales);
  c.mp_push_value_ns *= c.mp_worker_scale;
  c.mp_push_value_big_ns *= c.mp_worker_scale;
  c.mp_decode_value_ns *= c.mp_worker_scale;
  c.mp_reply_value_ns *= c.mp_shard_scale;
  c.message_us = std::max(c.message_us, c.message_us + c.handler_job_gap_us);
  // Two busy cores cost each other's handlers more in a run (the scheduler's
  // threads, the shards' tables, the shared replica) than the dense probe's
  // threads each other (issue 38: the job's real rate asked 1.37 where the
  // probe read 1.08 on the AMD EPYC VM): fitted to the job's real run.
  c.contention_probe = c.core_contention;
  if (cores > 1) {
    scratch_file long_data{scratch_path("fit", ".tsv")};
    so.rows = contention_job_rows;
    if (!data::generate_synthetic(so, long_data.path, &gr, &err))
      return "calibrate: the contention fit's job: " + err;
    auto fit_common = common;
    for (auto& o : fit_common)
      if (o.rfind("--data.train=", 0) == 0)
        o = "--data.train=" + long_data.path;
    scratch_file fitted{scratch_path("fitted", ".json")};
    if (!runtime::write_replacing(fitted.path,
                                  runtime::calibration_json(calibration_record_of(c, base, "")),
                                  &err))
      return "calibrate: the handlers' job: " + err;
    if (auto e = fit_contention(fit_common, fitted.path, cores, c))
      return e;
  }
  return std::nullopt;
}

} // namespace tools
