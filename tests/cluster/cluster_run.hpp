#pragma once
// Helpers of the cluster tests (cluster_cut_test, virtual_cluster_test,
// recovery_test, full_recovery_test): a
// synthetic training file in a temporary folder, a train_config from
// command-line options, and a run of the simulated cluster.
#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "data/synthetic.hpp"
#include "cluster/cluster.hpp"
#include "config/options.hpp"
#include "report/progress.hpp"
#include "report/run_metrics.hpp"
#include "config/train_config.hpp"

namespace test {

// `rows` synthetic rows (sample seed `seed`) in DIR/train.tsv; DIR is
// removed at the end.
struct synthetic_train_file {
  synthetic_train_file(const std::string& tag, std::uint64_t rows, std::uint64_t seed)
      : dir(std::filesystem::temp_directory_path() /
            ("ss-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    train = (dir / "train.tsv").string();
    data::synthetic_options so;
    so.rows = rows;
    so.seed = seed;
    std::string err;
    data::generate_result gr;
    REQUIRE_MESSAGE(data::generate_synthetic(so, train, &gr, &err), err);
  }
  ~synthetic_train_file() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
  std::string train;
};

// The train options `args` must parse and build.
inline runtime::train_config train_config_of(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  const auto parsed = o.parse(args);
  REQUIRE_MESSAGE(!parsed, parsed.value_or(""));
  runtime::train_config cfg;
  const auto built = runtime::build_train_config(o, cfg);
  REQUIRE_MESSAGE(!built, built.value_or(""));
  return cfg;
}

// `cmd` with more options.
inline std::vector<std::string> with(std::vector<std::string> cmd,
                                     std::initializer_list<std::string> more) {
  cmd.insert(cmd.end(), more);
  return cmd;
}

// The error the train options `args` give when parsed and built ("": none).
inline std::string config_error(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  if (auto e = o.parse(args))
    return *e;
  runtime::train_config cfg;
  return runtime::build_train_config(o, cfg).value_or("");
}

// run_simulated; its failure, if any.
inline std::optional<std::string> try_cluster(const runtime::train_config& cfg,
                                              runtime::run_metrics& out) {
  runtime::progress_reporter progress("none", 1.0, "");
  return runtime::run_simulated(cfg, progress, out);
}

// run_simulated, which must succeed.
inline runtime::run_metrics run_cluster(const runtime::train_config& cfg) {
  runtime::run_metrics out;
  const auto failure = try_cluster(cfg, out);
  REQUIRE_MESSAGE(!failure, failure.value_or(""));
  return out;
}

} // namespace test
