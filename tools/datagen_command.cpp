// `shadowsync datagen`: synthetic Criteo-shaped TSV plus PATH.meta.json.
//
// Keys live in [datagen] (rows, seed, out) and [teacher] (the planted model).
// On the command line the [datagen] ones may be written without their group:
// --rows=N is --datagen.rows=N.
#include <cstdio>

#include <spdlog/spdlog.h>

#include "data/synthetic.hpp"
#include "report/logging.hpp"
#include "config/options.hpp"
#include "report/progress.hpp"
#include "tools/commands.hpp"

namespace tools {

namespace {

void add_datagen_options(runtime::option_set& o) {
  using runtime::opt_type;
  auto add = [&](std::string key, opt_type t, std::string def, std::string help,
                 std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
    o.add(runtime::option_spec{std::move(key), t, std::move(def), std::move(help), {}, min, max});
  };
  const data::synthetic_options d;
  auto num = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return std::string(buf);
  };
  add("datagen.out", opt_type::string, "", "output TSV path (required); PATH.meta.json is written beside it");
  add("datagen.rows", opt_type::integer, std::to_string(d.rows), "rows to write", 1);
  add("datagen.seed", opt_type::integer, std::to_string(d.seed), "sample seed (examples and labels)", 0);
  add("teacher.seed", opt_type::integer, std::to_string(d.teacher_seed),
      "teacher seed: vocabularies, effects, interactions, bias (share it between train and eval)", 0);
  add("teacher.zipf-exponent", opt_type::real, num(d.zipf_exponent), "Zipf exponent of categorical values", 1e-6);
  add("teacher.vocab-scale", opt_type::real, num(d.vocab_scale), "largest vocabulary = 1e6 x scale (smallest 10)", 1e-6);
  add("teacher.cat-effect-scale", opt_type::real, num(d.cat_effect_scale), "std-dev of per-value logit effects", 0.0);
  add("teacher.interaction-count", opt_type::integer, std::to_string(d.interaction_count),
      "factorised pairwise interactions between categorical columns", 0, 325);
  add("teacher.interaction-rank", opt_type::integer, std::to_string(d.interaction_rank), "rank of each interaction", 1, 64);
  add("teacher.interaction-scale", opt_type::real, num(d.interaction_scale), "std-dev of each interaction term", 0.0);
  add("teacher.dense-effect-scale", opt_type::real, num(d.dense_effect_scale), "std-dev of the dense-feature MLP term", 0.0);
  add("teacher.target-ctr", opt_type::real, num(d.target_ctr), "mean true click probability", 1e-6, 1 - 1e-6);
  add("teacher.calibration-rows", opt_type::integer, std::to_string(d.calibration_rows),
      "examples used to tune the bias to the target CTR", 1);
  o.add(runtime::option_spec{"teacher.bag-sizes", opt_type::string, "none",
                             "multi-hot columns: 'none', 'mlperf' (MLPerf DLRM-DCNv2's 26 sizes) or 26 comma-separated "
                             "ids per bag, 0 = one id; ids are written joined by '|'"});
  o.add(runtime::option_spec{"teacher.bag-size-draw", opt_type::string, "fixed",
                             "fixed: every bag holds its size's ids; uniform: 1 .. 2 x size - 1 ids (mean size)",
                             {"fixed", "uniform"}});
  add("output.log-level", opt_type::string, "info", "log verbosity");
}

} // namespace

int datagen_command(const std::vector<std::string>& raw_args) {
  std::vector<std::string> args;
  for (const auto& a : raw_args) {
    const auto eq = a.find('=');
    const auto name = a.substr(0, eq);
    if (a.rfind("--", 0) == 0 && name.find('.') == std::string::npos && name != "--config-file" &&
        name != "--help")
      args.push_back("--datagen." + a.substr(2));
    else
      args.push_back(a);
  }
  runtime::option_set opts;
  add_datagen_options(opts);
  if (auto err = opts.parse(args)) {
    std::fprintf(stderr, "shadowsync datagen: %s\n(see 'shadowsync datagen --help')\n", err->c_str());
    return exit_usage;
  }
  if (opts.help_requested()) {
    std::fputs(opts.help_text("usage: shadowsync datagen --out=PATH [--rows=N] [--seed=S] [--teacher.key=value ...]").c_str(),
               stdout);
    return exit_ok;
  }
  const std::string out = opts.get_string("datagen.out");
  if (out.empty()) {
    std::fprintf(stderr, "shadowsync datagen: option 'datagen.out' (--out=PATH) is required\n");
    return exit_usage;
  }
  runtime::setup_logging(opts.get_string("output.log-level"));
  data::synthetic_options so;
  so.rows = std::uint64_t(opts.get_int("datagen.rows"));
  so.seed = std::uint64_t(opts.get_int("datagen.seed"));
  so.teacher_seed = std::uint64_t(opts.get_int("teacher.seed"));
  so.zipf_exponent = opts.get_real("teacher.zipf-exponent");
  so.vocab_scale = opts.get_real("teacher.vocab-scale");
  so.cat_effect_scale = opts.get_real("teacher.cat-effect-scale");
  so.interaction_count = std::size_t(opts.get_int("teacher.interaction-count"));
  so.interaction_rank = std::size_t(opts.get_int("teacher.interaction-rank"));
  so.interaction_scale = opts.get_real("teacher.interaction-scale");
  so.dense_effect_scale = opts.get_real("teacher.dense-effect-scale");
  so.target_ctr = opts.get_real("teacher.target-ctr");
  so.calibration_rows = std::uint64_t(opts.get_int("teacher.calibration-rows"));
  if (auto bad = data::parse_bag_sizes(opts.get_string("teacher.bag-sizes"), &so.bag_size); !bad.empty()) {
    std::fprintf(stderr, "shadowsync datagen: option 'teacher.bag-sizes': %s\n", bad.c_str());
    return exit_usage;
  }
  so.bag_drawn = opts.get_string("teacher.bag-size-draw") == "uniform";
  if (auto bad = data::validate(so); !bad.empty()) {
    std::fprintf(stderr, "shadowsync datagen: %s\n", bad.c_str());
    return exit_usage;
  }
  runtime::progress_reporter progress("auto", 5.0, "datagen");
  data::generate_result res;
  std::string err;
  auto report = [&](std::uint64_t rows) {
    runtime::progress_sample s;
    s.examples = rows;
    s.fraction_done = double(rows) / double(so.rows);
    progress.update(s);
  };
  if (!data::generate_synthetic(so, out, &res, &err, report)) {
    spdlog::error("{}", err);
    return exit_failure;
  }
  std::printf("wrote %llu rows to %s (%.1f s): positive rate %.4f, Bayes logloss %.4f, Bayes NE %.4f\n",
              static_cast<unsigned long long>(res.meta.rows), out.c_str(), progress.elapsed_seconds(),
              res.meta.positive_rate, res.meta.bayes_logloss, res.meta.bayes_ne);
  if (data::has_multi_hot(so)) {
    std::string cols;
    for (std::size_t c = 0; c < data::synthetic_num_cat; ++c)
      if (so.bag_size[c] > 0)
        cols += (cols.empty() ? "C" : ",C") + std::to_string(c + 1);
    std::printf("multi-hot columns: %s\n", cols.c_str());
  }
  return exit_ok;
}

} // namespace tools
