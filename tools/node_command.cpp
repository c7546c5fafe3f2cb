// `shadowsync node --config-file=SPEC --node=ID`: one process of a
// multi-node cluster (deploy/node.hpp). The coordinator node prints the
// run's summary and writes output.metrics like `train`.
#include <cstdio>
#include <fstream>

#include <spdlog/spdlog.h>

#include "checkpoint/dir_lock.hpp"
#include "config/deploy_config.hpp"
#include "report/logging.hpp"
#include "cluster/memory_estimate.hpp"
#include "deploy/node.hpp"
#include "engine/saved_model.hpp"
#include "engine/synthetic_data.hpp"
#include "engine/stop_signal.hpp"
#include "tools/commands.hpp"

namespace tools {

namespace {

const char* usage =
  "usage: shadowsync node --config-file=SPEC.ini --node=ID [--group.key=value ...]";

} // namespace

std::optional<std::string> take_attached(std::vector<std::string>& args, const std::string& name,
                                         std::string& value) {
  const std::string flag = "--" + name, prefix = flag + "=";
  std::vector<std::string> rest;
  bool seen = false;
  for (const auto& a : args) {
    if (a == flag)
      return flag + " needs its value attached: " + prefix + "VALUE";
    if (a.rfind(prefix, 0) != 0) {
      rest.push_back(a);
      continue;
    }
    if (seen)
      return flag + " given twice";
    seen = true;
    value = a.substr(prefix.size());
    if (value.empty())
      return prefix + " needs a value";
  }
  args = std::move(rest);
  return std::nullopt;
}

// Parses the spec and the run's options (cluster.* counts from the role lists).
std::optional<std::string> parse_spec(const std::vector<std::string>& args,
                                      runtime::option_set& opts) {
  runtime::add_train_options(opts);
  runtime::add_deploy_options(opts);
  if (auto err = opts.parse(args))
    return err;
  if (opts.help_requested())
    return std::nullopt;
  std::vector<std::string> extra;
  if (auto err = runtime::deploy_overrides(opts, extra))
    return err;
  if (extra.empty())
    return std::nullopt;
  auto all = args;
  all.insert(all.end(), extra.begin(), extra.end());
  return opts.parse(all);
}

int node_command(const std::vector<std::string>& raw) {
  auto args = raw;
  std::string node;
  runtime::option_set opts;
  auto err = take_attached(args, "node", node);
  if (!err)
    err = parse_spec(args, opts);
  if (!err && !opts.help_requested() && node.empty())
    err = "--node=ID is required (one of deploy.nodes)";
  if (err) {
    std::fprintf(stderr, "shadowsync node: %s\n(see 'shadowsync node --help')\n", err->c_str());
    return exit_usage;
  }
  if (opts.help_requested()) {
    std::fputs(opts.help_text(usage).c_str(), stdout);
    return exit_ok;
  }
  runtime::node_context ctx;
  ctx.node = node;
  auto e = runtime::refuse_local_rows_in_multi_node(opts);
  if (!e)
    e = runtime::build_train_config(opts, ctx.cfg);
  if (!e)
    e = runtime::refuse_in_multi_node(ctx.cfg);
  if (e) {
    std::fprintf(stderr, "shadowsync node %s: %s\n", node.c_str(), e->c_str());
    return exit_usage;
  }
  if (auto e = runtime::build_deploy(opts, node, ctx.deploy)) {
    std::fprintf(stderr, "shadowsync node %s: %s\n", node.c_str(), e->c_str());
    return exit_usage;
  }
  if (auto e = runtime::check_memory(ctx.cfg, runtime::node_roles(ctx.deploy, node),
                                     runtime::physical_memory_bytes())) {
    std::fprintf(stderr, "shadowsync node %s: %s\n", node.c_str(), e->c_str());
    return exit_usage;
  }
  runtime::setup_logging(ctx.cfg.output.log_level);
  const bool coordinator = node == ctx.deploy.coordinator;
  auto& cfg = ctx.cfg;
  if (coordinator) // resumed onto other training files only with checkpoint.new-data
    if (auto e = runtime::check_resume_data(cfg)) {
      spdlog::error("{}", *e);
      return exit_usage;
    }
  if (coordinator && cfg.data.train.empty()) { // the trainer nodes generate or reuse the same
    runtime::synthetic_paths paths;
    if (auto e = runtime::ensure_synthetic(cfg.data, paths)) {
      spdlog::error("{}", *e);
      return exit_failure;
    }
    if (cfg.data.eval.empty())
      cfg.data.eval = {paths.eval};
  }
  ctx.config_ini = opts.effective_ini();
  cfg.checkpoint.effective_ini = runtime::without_deploy_groups(ctx.config_ini); // (output.model)
  runtime::run_metrics m;
  m.mode = "multi-node";
  m.arch = cfg.arch_name;
  m.batch_size = cfg.train.batch_size;
  runtime::progress_reporter progress(coordinator ? cfg.output.progress : "none",
                                      cfg.output.progress_seconds, "train");
  run_output output;
  if (coordinator ? !output.open(cfg, ctx.config_ini, progress, "", node)
                  : !output.serve_metrics(cfg, "node", node, progress))
    return exit_failure;
  // One run owns output.model's dir and checkpoint.dir (not the shards'
  // own saves' dir of recovery.mode=partial), taken before the first example.
  if (coordinator)
    if (auto e = checkpoint::lock_checkpoint_dirs(
          {cfg.recovery.partial ? std::string{} : cfg.checkpoint.dir, cfg.checkpoint.model_out})) {
      spdlog::error("{}", *e);
      return exit_usage;
    }
  if (coordinator && !cfg.checkpoint.resume.empty())
    runtime::warn_training_changes(cfg.checkpoint.resume, cfg);
  if (coordinator)
    spdlog::info("coordinator of {} nodes: {} trainers x {} workers, {} embedding shards, sync {}",
                 ctx.deploy.nodes.size(), cfg.cluster.trainers, cfg.cluster.workers,
                 cfg.cluster.embedding_shards, model::to_string(cfg.sync.algorithm));
  if (coordinator) // the first SIGINT/SIGTERM stops the job; other nodes: a lost node
    runtime::install_stop_handlers();
  if (auto e = runtime::run_node(ctx, progress, m)) {
    if (m.stopped_by) {
      spdlog::warn("node {}: {}", node, *e);
      return 128 + runtime::stop_requested();
    }
    spdlog::error("node {}: {}", node, *e);
    return exit_failure;
  }
  if (!coordinator) {
    spdlog::info("node {}: done", node);
    return exit_ok;
  }
  return output.finish(cfg, m);
}

} // namespace tools
