// shadowsync: thin entry point. Picks the sub-command and maps its result to
// the exit code; all work happens in the libraries below.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "model/gemm_blocking.hpp"
#include "deploy/isa_check.hpp"
#include "tools/commands.hpp"

namespace {

const char* usage =
  "usage: shadowsync <command> [--config-file=FILE.ini] [--group.key=value ...]\n"
  "\n"
  "commands:\n"
  "  train     train a CTR model (default: synthetic data, simulated cluster, virtual clock)\n"
  "  datagen   write synthetic Criteo-shaped TSV with a planted teacher and a .meta.json\n"
  "  predict   score a file with a saved model (--model=PATH --data=FILE --out=FILE)\n"
  "  eval      NE, AUC, logloss and calibration of a saved model on labelled data\n"
  "  node      run one node of a multi-node cluster spec (--node=ID)\n"
  "  launch    start every node of a cluster spec on this machine\n"
  "  calibrate measure the virtual clock's cost constants on this machine (INI lines)\n"
  "  report    one HTML page of run folders: settings, summary, charts (RUN_DIR... --out=PAGE.html)\n"
  "\n"
  "Run 'shadowsync <command> --help' for the options of a command.\n";

void print_usage(std::FILE* to) {
  std::fputs(usage, to);
  std::fprintf(to, "(built for the instruction-set level %s)\n", runtime::isa_level());
}

int run(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return tools::exit_usage;
  }
  const std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  int rc = tools::exit_usage;
  if (cmd == "train")
    rc = tools::train_command(args);
  else if (cmd == "datagen")
    rc = tools::datagen_command(args);
  else if (cmd == "predict")
    rc = tools::predict_command(args);
  else if (cmd == "eval")
    rc = tools::eval_command(args);
  else if (cmd == "node")
    rc = tools::node_command(args);
  else if (cmd == "launch")
    rc = tools::launch_command(args);
  else if (cmd == "calibrate")
    rc = tools::calibrate_command(args);
  else if (cmd == "report")
    rc = tools::report_command(args);
  else if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    print_usage(stdout);
    rc = tools::exit_ok;
  } else {
    std::fprintf(stderr, "shadowsync: unknown command '%s'\n\n%s", cmd.c_str(), usage);
  }
  return rc;
}

} // namespace

// Any exception that escapes a command (std::bad_alloc, a library's throw)
// becomes exit 1 with its message, never an abort with a core dump.
int main(int argc, char** argv) {
  int rc = tools::exit_failure;
  model::pin_gemm_blocking(); // the same product bits on every node
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shadowsync: fatal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "shadowsync: fatal error: an unknown exception\n");
  }
  spdlog::shutdown();
  return rc;
}
