// `shadowsync launch --config-file=SPEC [--group.key=value ...]`: every node
// of the spec as a local child process (runtime/launcher.hpp).
#include <cstdio>
#include <unistd.h>

#include "runtime/deploy_config.hpp"
#include "runtime/launcher.hpp"
#include "tools/commands.hpp"

namespace tools {

int launch_command(const std::vector<std::string>& args) {
  runtime::option_set opts;
  if (auto err = parse_spec(args, opts)) {
    std::fprintf(stderr, "shadowsync launch: %s\n(see 'shadowsync launch --help')\n",
                 err->c_str());
    return exit_usage;
  }
  if (opts.help_requested()) {
    std::fputs(opts.help_text("usage: shadowsync launch --config-file=SPEC.ini "
                              "[--group.key=value ...]\n"
                              "Starts every node of the spec on this machine; the options are "
                              "passed to every node.")
                 .c_str(),
               stdout);
    return exit_ok;
  }
  runtime::train_config cfg;
  runtime::deploy_settings d;
  std::optional<std::string> err = runtime::build_train_config(opts, cfg);
  if (!err)
    err = runtime::refuse_in_multi_node(cfg.checkpoint);
  if (!err)
    err = runtime::build_deploy(opts, "", d);
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
  return runtime::launch_local(plan);
}

} // namespace tools
