#pragma once
// Sub-commands of the `shadowsync` executable. Each returns the process exit
// code: 0 success, 1 runtime failure, 2 bad usage or configuration.
#include <string>
#include <vector>

#include "runtime/run_metrics.hpp"
#include "runtime/train_config.hpp"

namespace tools {

constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

int train_command(const std::vector<std::string>& args);
int datagen_command(const std::vector<std::string>& args);
// After a run: the eval set's Bayes NE into m, the summary on stdout,
// output.metrics. Returns the exit code.
int report_run(const runtime::train_config& cfg, runtime::run_metrics& m);
bool write_text_file(const std::string& path, const std::string& text);

int node_command(const std::vector<std::string>& args);
int launch_command(const std::vector<std::string>& args);

} // namespace tools
