// `shadowsync report RUN_DIR... --out=PAGE.html`: one self-contained HTML
// page of run folders (train --output.dir), overlaid (report/report_page.hpp).
#include <cstdio>

#include "report/output_files.hpp"
#include "report/report_page.hpp"
#include "report/run_folder.hpp"
#include "tools/commands.hpp"

namespace tools {

namespace {

const char* report_usage =
  "usage: shadowsync report RUN_DIR... --out=PAGE.html\n"
  "\n"
  "Writes one HTML page (no network needed to view it) of the run folders that\n"
  "'train --output.dir=RUN_DIR' wrote: their settings, summaries, charts over time\n"
  "(examples/s, train NE, sync gap, bytes, blocked share) and the per-host busy\n"
  "share on the virtual clock, several runs overlaid. A run folder needs\n"
  "config.ini and metrics.json or timeline.csv.\n"
  "\n"
  "  --out=PATH   the page to write (required; replaced atomically)\n"
  "  -h, --help   print this help and exit\n";

} // namespace

int report_command(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out;
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(report_usage, stdout);
      return exit_ok;
    }
    if (a.rfind("--out=", 0) == 0) {
      if (!out.empty()) {
        std::fprintf(stderr, "shadowsync report: --out given twice\n");
        return exit_usage;
      }
      out = a.substr(6);
      if (out.empty()) {
        std::fprintf(stderr, "shadowsync report: --out needs a path (--out=PAGE.html)\n");
        return exit_usage;
      }
    } else if (a.rfind("-", 0) == 0 && a != "-") {
      std::fprintf(stderr, "shadowsync report: unknown option '%s'\n\n%s", a.c_str(), report_usage);
      return exit_usage;
    } else {
      dirs.push_back(a);
    }
  }
  if (dirs.empty() || out.empty()) {
    std::fprintf(stderr, "shadowsync report: %s\n\n%s",
                 dirs.empty() ? "no run folder given" : "--out=PAGE.html is required",
                 report_usage);
    return exit_usage;
  }
  std::vector<runtime::run_folder> runs(dirs.size());
  runtime::input_files inputs;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    if (auto e = runtime::read_run_folder(dirs[i], &runs[i])) {
      std::fprintf(stderr, "shadowsync report: %s\n", e->c_str());
      return exit_failure;
    }
    inputs.add(dirs[i]);
  }
  if (auto e = runtime::check_output_file("--out", out, inputs)) {
    std::fprintf(stderr, "shadowsync report: %s\n", e->c_str());
    return exit_usage;
  }
  std::string err;
  if (!runtime::write_replacing(out, runtime::report_page(runs), &err)) {
    std::fprintf(stderr, "shadowsync report: %s\n", err.c_str());
    return exit_failure;
  }
  std::printf("wrote %s (%zu run%s)\n", out.c_str(), runs.size(), runs.size() == 1 ? "" : "s");
  return exit_ok;
}

} // namespace tools
