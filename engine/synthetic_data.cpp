#include "engine/synthetic_data.hpp"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "data/meta.hpp"
#include "data/synthetic.hpp"
#include "report/progress.hpp"

namespace runtime {

namespace {

// Reuses `path` when its sidecar records exactly `opts`; otherwise generates.
std::optional<std::string> make_or_reuse(const data::synthetic_options& opts,
                                         const std::string& path) {
  std::string err;
  if (std::filesystem::exists(path))
    if (auto meta = data::read_meta(data::meta_path_for(path), &err);
        meta && meta->options == opts) {
      spdlog::info("reusing synthetic data {} ({} rows, Bayes NE {:.4f})", path, meta->rows,
                   meta->bayes_ne);
      return std::nullopt;
    }
  spdlog::info("generating synthetic data {} ({} rows, seed {}, teacher seed {})", path,
               opts.rows, opts.seed, opts.teacher_seed);
  progress_reporter progress("auto", 5.0, "datagen");
  auto report = [&](std::uint64_t rows) {
    progress_sample s;
    s.examples = rows;
    s.fraction_done = double(rows) / double(opts.rows);
    progress.update(s);
  };
  data::generate_result res;
  if (!data::generate_synthetic(opts, path, &res, &err, report))
    return err;
  progress_sample done;
  done.examples = opts.rows;
  progress.finish(done);
  spdlog::info("wrote {}: positive rate {:.4f}, Bayes NE {:.4f}", path, res.meta.positive_rate,
               res.meta.bayes_ne);
  return std::nullopt;
}

} // namespace

std::optional<std::string> ensure_synthetic(const data_settings& d, synthetic_paths& out) {
  std::error_code ec;
  std::filesystem::create_directories(d.synthetic_dir, ec);
  if (ec)
    return "option 'data.synthetic-dir': cannot create directory '" + d.synthetic_dir +
           "': " + ec.message();
  data::synthetic_options train;
  train.rows = d.synthetic_rows;
  train.seed = d.synthetic_seed;
  train.teacher_seed = d.teacher_seed;
  data::synthetic_options eval = train;
  eval.rows = d.synthetic_eval_rows;
  eval.seed = d.synthetic_seed + 1;
  const std::string stem = d.synthetic_dir + "/teacher" + std::to_string(d.teacher_seed);
  out.train = stem + "-train-" + std::to_string(train.rows) + "-seed" +
              std::to_string(train.seed) + ".tsv";
  out.eval = stem + "-eval-" + std::to_string(eval.rows) + "-seed" + std::to_string(eval.seed) +
             ".tsv";
  if (auto err = make_or_reuse(train, out.train))
    return err;
  return make_or_reuse(eval, out.eval);
}

} // namespace runtime
