#pragma once
// Sub-commands of the `shadowsync` executable. Each returns the process exit
// code: 0 success, 1 runtime failure, 2 bad usage or configuration.
#include <optional>
#include <string>
#include <vector>

#include <fstream>
#include <memory>

#include "config/options.hpp"
#include "report/metrics_endpoint.hpp"
#include "report/progress.hpp"
#include "report/run_metrics.hpp"
#include "report/timeline.hpp"
#include "config/train_config.hpp"

namespace tools {

constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

int train_command(const std::vector<std::string>& args);
int predict_command(const std::vector<std::string>& args);
int eval_command(const std::vector<std::string>& args);

// Short forms of grouped options: "--NAME=V" becomes "--KEY=V" for each
// {NAME, KEY} (e.g. --resume=PATH is --checkpoint.resume=PATH).
std::vector<std::string> rewrite_aliases(
  const std::vector<std::string>& args,
  const std::vector<std::pair<std::string, std::string>>& aliases);
int datagen_command(const std::vector<std::string>& args);
// Every output of a run (output.config, output.metrics, output.dir,
// output.model, checkpoint.dir) can be written and none is one of its inputs
// (data, config_file, checkpoint.resume): an error naming the key and path.
// Checked before the first example, so an unwritable path costs no work.
std::optional<std::string> check_outputs(const runtime::train_config& cfg,
                                         const std::string& config_file);
// The outputs of a run (train, and the coordinator node): open() before it
// writes output.config and opens the run folder output.dir with its timeline
// (hooked to `progress`); finish() after it adds the eval set's Bayes NE,
// prints the summary and writes metrics.json / output.metrics. Each returns
// false / exit_failure (logged) on an I/O error.
class run_output {
public:
  // Fails (logged, naming the key and path) before any work when an output
  // cannot be written or is one of the run's inputs (config_file among them).
  // Also starts the /metrics endpoint (output.metrics-port), fed by
  // `progress` and finish(); `node` labels its samples (multi-node).
  bool open(const runtime::train_config& cfg, const std::string& effective_ini,
            runtime::progress_reporter& progress, const std::string& config_file = "",
            const std::string& node = "");
  int finish(const runtime::train_config& cfg, runtime::run_metrics& m);
  // Only the /metrics endpoint, when output.metrics-port is set (a node
  // other than the coordinator); false (logged, naming the option) when its
  // address cannot be bound.
  bool serve_metrics(const runtime::train_config& cfg, const std::string& role,
                     const std::string& node, runtime::progress_reporter& progress);

private:
  std::unique_ptr<runtime::metrics_endpoint> metrics_;
  std::string dir_;
  std::ofstream csv_;
  std::unique_ptr<runtime::timeline> timeline_;
};

// `node` and `launch`: the spec's options (train + [deploy] + [openssl]),
// with the cluster.* counts implied by the role lists (node_command.cpp).
std::optional<std::string> parse_spec(const std::vector<std::string>& args,
                                      runtime::option_set& opts);

// Takes `--NAME=VALUE` off `args` (node_command.cpp): at most once, with a
// non-empty value attached ("--NAME VALUE" is an error). `value` stays as it
// was when the option is absent.
std::optional<std::string> take_attached(std::vector<std::string>& args, const std::string& name,
                                         std::string& value);

int node_command(const std::vector<std::string>& args);
int launch_command(const std::vector<std::string>& args);
int calibrate_command(const std::vector<std::string>& args);
// `report RUN_DIR... --out=PAGE.html` (report_command.cpp).
int report_command(const std::vector<std::string>& args);

} // namespace tools
