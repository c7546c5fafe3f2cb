// The end of a run, shared by `train` and `node` (coordinator): the eval
// set's Bayes NE, the summary on stdout, output.metrics.
#include <cstdio>
#include <fstream>

#include <spdlog/spdlog.h>

#include "data/meta.hpp"
#include "tools/commands.hpp"

namespace tools {

bool write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

int report_run(const runtime::train_config& cfg, runtime::run_metrics& m) {
  if (!cfg.data.eval.empty()) {
    std::string ignored;
    if (cfg.data.eval.size() == 1)
      if (auto meta = data::read_meta(data::meta_path_for(cfg.data.eval[0]), &ignored))
        m.eval_bayes_ne = meta->bayes_ne;
  } else {
    spdlog::warn("no data.eval given: eval metrics are null");
  }
  std::printf("%s\n", runtime::summary(m).c_str());
  std::fflush(stdout);
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
