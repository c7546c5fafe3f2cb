// The outputs of a run, shared by `train` and `node` (coordinator):
// output.config, the run folder output.dir (config.ini, timeline.csv,
// metrics.json), the eval set's Bayes NE, the summary on stdout,
// output.metrics.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "data/input_files.hpp"
#include "cluster/cluster_plan.hpp"
#include "data/meta.hpp"
#include "report/output_files.hpp"
#include "tools/commands.hpp"

namespace tools {

namespace {

bool write_text_file(const std::string& path, const std::string& text) {
  std::string err;
  if (runtime::write_replacing(path, text, &err))
    return true;
  spdlog::error("{}", err);
  return false;
}

// The effective INI as output.config writes it: its own `output.config`
// left empty, so that a run from the saved file reproduces the run without
// writing over the file it reads.
std::string without_own_path(const std::string& ini) {
  std::string out, group;
  std::size_t pos = 0;
  while (pos < ini.size()) {
    std::size_t end = ini.find('\n', pos);
    if (end == std::string::npos)
      end = ini.size();
    std::string line = ini.substr(pos, end - pos);
    if (!line.empty() && line[0] == '[')
      group = line.substr(1, line.find(']') - 1);
    else if (group == "output" && line.rfind("config = ", 0) == 0)
      line = "config = \"\"";
    out += line;
    if (end < ini.size())
      out += '\n';
    pos = end + 1;
  }
  return out;
}

} // namespace

std::optional<std::string> check_outputs(const runtime::train_config& cfg,
                                         const std::string& config_file) {
  runtime::input_files in;
  for (const auto* entries : {&cfg.data.train, &cfg.data.eval}) {
    in.add(*entries);
    std::vector<std::string> files; // what patterns match, too
    std::string ignored;            // the reader reports a bad entry
    if (data::expand_inputs(*entries, &files, &ignored))
      in.add(files);
  }
  in.add(config_file);
  in.add(cfg.checkpoint.resume);
  const std::pair<const char*, const std::string*> files[] = {
    {"output.config", &cfg.output.config}, {"output.metrics", &cfg.output.metrics}};
  for (const auto& [key, path] : files)
    if (auto e = runtime::check_output_file(key, *path, in))
      return e;
  const std::pair<const char*, const std::string*> dirs[] = {
    {"output.dir", &cfg.output.dir},
    {"output.model", &cfg.checkpoint.model_out},
    {"checkpoint.dir", &cfg.checkpoint.dir}};
  for (const auto& [key, path] : dirs)
    if (auto e = runtime::check_output_dir(key, *path, in))
      return e;
  return std::nullopt;
}

bool run_output::serve_metrics(const runtime::train_config& cfg, const std::string& role,
                               const std::string& node, runtime::progress_reporter& progress) {
  if (cfg.output.metrics_port == 0)
    return true;
  std::string err;
  metrics_ = runtime::metrics_endpoint::start(cfg.output.metrics_address, cfg.output.metrics_port,
                                              role, node, &err);
  if (!metrics_) {
    spdlog::error("{}", err);
    return false;
  }
  progress.set_metrics(metrics_.get());
  spdlog::info("serving /metrics on http://{}:{}/metrics", cfg.output.metrics_address,
               metrics_->port());
  return true;
}

bool run_output::open(const runtime::train_config& cfg, const std::string& effective_ini,
                      runtime::progress_reporter& progress, const std::string& config_file,
                      const std::string& node) {
  if (auto e = check_outputs(cfg, config_file)) {
    spdlog::error("{}", *e);
    return false;
  }
  const bool sequential = cfg.cluster.mode == runtime::cluster_mode::sequential;
  if (!serve_metrics(cfg, sequential ? "sequential" : "coordinator", node, progress))
    return false;
  if (!cfg.output.config.empty() &&
      !write_text_file(cfg.output.config, without_own_path(effective_ini))) {
    spdlog::error("cannot write output.config file '{}'", cfg.output.config);
    return false;
  }
  dir_ = cfg.output.dir;
  if (dir_.empty())
    return true;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    spdlog::error("cannot create output.dir '{}': {}", dir_, ec.message());
    return false;
  }
  if (!write_text_file(dir_ + "/config.ini", effective_ini)) {
    spdlog::error("cannot write '{}/config.ini'", dir_);
    return false;
  }
  csv_.open(dir_ + "/timeline.csv", std::ios::binary | std::ios::trunc);
  if (!csv_) {
    spdlog::error("cannot write '{}/timeline.csv'", dir_);
    return false;
  }
  // The virtual clock's simulated hosts get a busy-share column each.
  const std::size_t hosts =
    cfg.cluster.mode == runtime::cluster_mode::simulated && cfg.sim.virtual_clock
      ? runtime::placement_for(cfg).hosts()
      : 0;
  timeline_ = std::make_unique<runtime::timeline>(cfg.output.timeline_seconds, &csv_, hosts);
  progress.set_timeline(timeline_.get());
  return true;
}

int run_output::finish(const runtime::train_config& cfg, runtime::run_metrics& m) {
  if (!cfg.data.eval.empty()) {
    std::string ignored;
    if (cfg.data.eval.size() == 1)
      if (auto meta = data::read_meta(data::meta_path_for(cfg.data.eval[0]), &ignored))
        m.eval_bayes_ne = meta->bayes_ne;
  } else {
    spdlog::warn("no data.eval given: eval metrics are null");
  }
  if (metrics_)
    metrics_->publish_final(m);
  std::printf("%s\n", runtime::summary(m).c_str());
  std::fflush(stdout);
  if (timeline_) {
    timeline_->finish(runtime::final_sample(m));
    if (!csv_.flush() || !write_text_file(dir_ + "/metrics.json", runtime::to_json(m))) {
      spdlog::error("cannot write the run folder output.dir '{}'", dir_);
      return exit_failure;
    }
    spdlog::info("run folder written: {} (metrics.json, timeline.csv, config.ini)", dir_);
  }
  if (!cfg.output.metrics.empty()) {
    if (!write_text_file(cfg.output.metrics, runtime::to_json(m))) {
      spdlog::error("cannot write output.metrics file '{}'", cfg.output.metrics);
      return exit_failure;
    }
    spdlog::info("metrics written to {}", cfg.output.metrics);
  }
  return exit_ok;
}

} // namespace tools
