// `shadowsync train`: options -> config -> data -> engine -> metrics.
#include <cstdio>

#include <spdlog/spdlog.h>

#include "checkpoint/dir_lock.hpp"
#include "cluster/cluster.hpp"
#include "report/logging.hpp"
#include "cluster/memory_estimate.hpp"
#include "engine/saved_model.hpp"
#include "engine/sequential_engine.hpp"
#include "engine/stop_signal.hpp"
#include "engine/synthetic_data.hpp"
#include "config/calibration_file.hpp"
#include "config/train_config.hpp"
#include "tools/calibration_record.hpp"
#include "tools/commands.hpp"

namespace tools {


int train_command(const std::vector<std::string>& raw_args) {
  runtime::option_set opts;
  runtime::add_train_options(opts);
  const auto args = rewrite_aliases(raw_args, {{"resume", "checkpoint.resume"}});
  if (auto err = opts.parse(args)) {
    std::fprintf(stderr, "shadowsync train: %s\n(see 'shadowsync train --help')\n",
                 err->c_str());
    return exit_usage;
  }
  if (opts.help_requested()) {
    std::fputs(opts.help_text("usage: shadowsync train [--config-file=FILE.ini] [--group.key=value ...]").c_str(),
               stdout);
    return exit_ok;
  }
  // sim.calibration = this-machine on a virtual-clock run: the kept
  // calibration of this machine, measured here the first time only.
  if (auto err = keep_machine_calibration(opts)) {
    std::fprintf(stderr, "shadowsync train: %s\n", err->c_str());
    return exit_failure;
  }
  // sim.calibration: the file's constants become the options' values (the
  // saved configuration then reproduces the run); nothing is measured.
  if (auto err = runtime::apply_calibration(opts)) {
    std::fprintf(stderr, "shadowsync train: %s\n", err->c_str());
    return exit_usage;
  }
  runtime::train_config cfg;
  if (auto err = runtime::build_train_config(opts, cfg)) {
    std::fprintf(stderr, "shadowsync train: %s\n", err->c_str());
    return exit_usage;
  }
  if (auto err = runtime::check_memory(cfg, runtime::physical_memory_bytes())) {
    std::fprintf(stderr, "shadowsync train: %s\n", err->c_str());
    return exit_usage;
  }
  if (auto err = check_outputs(cfg, opts.config_file())) {
    std::fprintf(stderr, "shadowsync train: %s\n", err->c_str());
    return exit_usage;
  }
  if (auto err = checkpoint::lock_checkpoint_dirs({cfg.checkpoint.dir, cfg.checkpoint.model_out})) {
    std::fprintf(stderr, "shadowsync train: %s\n", err->c_str()); // one run owns a dir (issue 40)
    return exit_usage;
  }
  runtime::setup_logging(cfg.output.log_level);
  cfg.checkpoint.effective_ini = opts.effective_ini();
  if (auto err = runtime::check_resume_data(cfg)) {
    spdlog::error("{}", *err);
    return exit_usage;
  }

  if (cfg.data.train.empty()) {
    runtime::synthetic_paths paths;
    if (auto err = runtime::ensure_synthetic(cfg.data, paths)) {
      spdlog::error("{}", *err);
      return exit_failure;
    }
    cfg.data.train = {paths.train};
    if (cfg.data.eval.empty())
      cfg.data.eval = {paths.eval};
  }
  spdlog::info("model {}: {}", cfg.arch_name, cfg.arch.describe());
  spdlog::info("mode {}, batch {}, dense {} lr {}, sparse {} lr {}",
               runtime::to_string(cfg.cluster.mode),
               cfg.train.batch_size, opts.get_string("train.dense-optimizer"), cfg.train.dense.lr,
               opts.get_string("train.sparse-optimizer"), cfg.train.sparse.lr);

  runtime::run_metrics m;
  m.mode = runtime::to_string(cfg.cluster.mode);
  m.arch = cfg.arch_name;
  m.batch_size = cfg.train.batch_size;
  runtime::progress_reporter progress(cfg.output.progress, cfg.output.progress_seconds, "train");
  run_output output;
  if (!output.open(cfg, opts.effective_ini(), progress, opts.config_file()))
    return exit_failure;
  if (!cfg.checkpoint.resume.empty())
    runtime::warn_training_changes(cfg.checkpoint.resume, cfg);
  // SIGINT/SIGTERM from here on: stop at a batch boundary, keep a checkpoint
  // of it (checkpoint.dir), exit 128 + the signal; a second one stops at once.
  runtime::install_stop_handlers();
  const auto stopped_code = [] { return 128 + runtime::stop_requested(); };
  if (cfg.cluster.mode == runtime::cluster_mode::simulated) {
    spdlog::info("simulated cluster: {} trainers x {} workers, {} embedding shards, {} dense "
                 "shards, sync {}, batch {}",
                 cfg.cluster.trainers, cfg.cluster.workers, cfg.cluster.embedding_shards,
                 cfg.cluster.dense_shards, model::to_string(cfg.sync.algorithm),
                 cfg.train.batch_size);
    if (cfg.sim.virtual_clock)
      spdlog::info("simulated on the virtual clock, constants: {}", cfg.sim.constants);
    const auto err = runtime::run_simulated(cfg, progress, m);
    if (m.sim) {
      m.sim->constants = cfg.sim.constants;
      m.sim->calibrated = cfg.sim.calibrated;
    }
    if (err) {
      if (m.stopped_by) {
        spdlog::warn("{}", *err);
        return stopped_code();
      }
      spdlog::error("training failed: {}", *err);
      return exit_failure;
    }
  } else {
    runtime::sequential_engine engine(cfg);
    if (!cfg.checkpoint.resume.empty())
      if (auto err = engine.restore(cfg.checkpoint.resume)) {
        spdlog::error("cannot resume: {}", *err);
        return exit_failure;
      }
    if (auto err = engine.train(progress, m)) {
      spdlog::error("training stopped: {}", *err);
      return exit_failure;
    }
    if (m.stopped_by) {
      spdlog::warn("stopped by {} after {} examples{}", *m.stopped_by, m.examples,
                   cfg.checkpoint.enabled()
                     ? "; --resume=" + cfg.checkpoint.dir + " finishes the run"
                     : std::string("; no checkpoint.dir: nothing kept"));
      const int rc = output.finish(cfg, m);
      return rc == exit_ok ? stopped_code() : rc;
    }
    if (!cfg.data.eval.empty())
      if (auto err = engine.evaluate(cfg.data.eval, m)) {
        spdlog::error("evaluation failed: {}", *err);
        return exit_failure;
      }
  }
  return output.finish(cfg, m);
}

} // namespace tools
