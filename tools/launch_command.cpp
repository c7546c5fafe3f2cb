// `shadowsync launch --config-file=SPEC [--group.key=value ...]`: every node
// of the spec as a local child process (deploy/launcher.hpp).
#include <cstdio>
#include <thread>
#include <unistd.h>

#include "config/deploy_config.hpp"
#include "deploy/launcher.hpp"
#include "cluster/memory_estimate.hpp"
#include "tools/commands.hpp"

namespace tools {

namespace {

// --restart=no|on-failure: the launcher's own option (the nodes do not see it).
std::optional<std::string> take_restart(std::vector<std::string>& args, bool& on_failure) {
  std::string v = "no";
  if (auto err = tools::take_attached(args, "restart", v))
    return err;
  if (v != "no" && v != "on-failure")
    return "--restart=" + v + ": expected on-failure or no";
  on_failure = v == "on-failure";
  return std::nullopt;
}

} // namespace

int launch_command(const std::vector<std::string>& raw) {
  runtime::option_set opts;
  auto args = raw;
  bool restart = false;
  auto perr = take_restart(args, restart);
  if (!perr)
    perr = parse_spec(args, opts);
  if (auto err = perr) {
    std::fprintf(stderr, "shadowsync launch: %s\n(see 'shadowsync launch --help')\n",
                 err->c_str());
    return exit_usage;
  }
  if (opts.help_requested()) {
    std::fputs(opts.help_text("usage: shadowsync launch --config-file=SPEC.ini "
                              "[--restart=no|on-failure] [--group.key=value ...]\n"
                              "Starts every node of the spec on this machine; the options are "
                              "passed to every node. Unless scheduler.max-threads is given, "
                              "each node gets the machine's cores / nodes scheduler threads "
                              "(at least 1).\n"
                              "  --restart=on-failure  start a node (not the coordinator) again "
                              "when it dies while the coordinator runs, at most 3 times per "
                              "node; with recovery.mode=partial a shard node rejoins and reloads "
                              "its shards from checkpoint.dir (default: no)")
                 .c_str(),
               stdout);
    return exit_ok;
  }
  runtime::train_config cfg;
  runtime::deploy_settings d;
  std::optional<std::string> err = runtime::refuse_local_rows_in_multi_node(opts);
  if (!err)
    err = runtime::build_train_config(opts, cfg);
  if (!err)
    err = runtime::refuse_in_multi_node(cfg);
  if (!err)
    err = runtime::build_deploy(opts, "", d);
  if (!err) // every node on this machine: the whole job's memory
    err = runtime::check_memory(cfg, runtime::physical_memory_bytes());
  if (err) {
    std::fprintf(stderr, "shadowsync launch: %s\n", err->c_str());
    return exit_usage;
  }
  runtime::launch_plan plan;
  char exe[4096];
  const auto n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    std::fprintf(stderr, "shadowsync launch: cannot find its own executable\n");
    return exit_failure;
  }
  plan.exe.assign(exe, std::size_t(n));
  for (const auto& x : d.nodes)
    plan.nodes.push_back(x.id);
  plan.coordinator = d.coordinator;
  plan.args = args;
  // Every node runs on this machine: unless scheduler.max-threads is given,
  // the cores are split between them (runtime::threads_per_node).
  if (!opts.is_set("scheduler.max-threads"))
    plan.args.push_back("--scheduler.max-threads=" +
                        std::to_string(runtime::threads_per_node(
                          std::thread::hardware_concurrency(), d.nodes.size())));
  plan.restart_on_failure = restart;
  return runtime::launch_local(plan);
}

} // namespace tools
