// `shadowsync predict` and `shadowsync eval`: a saved model (output.model or
// a checkpoint) scores new data.
//   predict --model=PATH --data=FILE[,FILE] --out=FILE   one probability per
//           example, in input order (the shortest decimal text that reads
//           back as the same float, one per line); malformed lines are skipped
//           and reported as in train (they get no line in --out). Lines may
//           lack the label column (--data.labels: auto recognises Criteo's
//           test layout, the 39 feature columns alone)
//   eval    --model=PATH --data.eval=FILE [--output.metrics=PATH]
//           prints NE, AUC, logloss and calibration (and GAUC with data.user)
// Both take --data.user (default: the model's own). With it, predict logs the
// AUC and GAUC of its scores when every line carried its label.
// The data layout and hashing are the model's own (its saved configuration).
#include <chrono>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

#include "data/input_files.hpp"
#include "engine/evaluation.hpp"
#include "engine/input.hpp"
#include "report/logging.hpp"
#include "report/output_files.hpp"
#include "report/run_metrics.hpp"
#include "engine/saved_model.hpp"
#include "tools/commands.hpp"

namespace tools {

namespace {

void add_common(runtime::option_set& o) {
  using t = runtime::opt_type;
  o.add({"use.model", t::string, "", "the model: a checkpoint folder or dir (also --model=PATH)"});
  o.add({"data.strict", t::boolean, "false", "true: a malformed line stops the run"});
  o.add({"data.user", t::string, "",
         "the column naming each example's user, for GAUC (index or name; empty = the model's "
         "own data.user, if it was trained with one)"});
  runtime::add_display_options(o);
}

// Parses the command line, loads the model. 0 on success, else the exit code.
int prepare(const char* name, const char* usage, runtime::option_set& opts,
            const std::vector<std::string>& args, const std::vector<const char*>& required,
            runtime::saved_model& model) {
  if (auto err = opts.parse(args)) {
    std::fprintf(stderr, "shadowsync %s: %s\n(see 'shadowsync %s --help')\n", name, err->c_str(),
                 name);
    return exit_usage;
  }
  if (opts.help_requested()) {
    std::fputs(opts.help_text(usage).c_str(), stdout);
    return -1;
  }
  for (const char* k : required)
    if (opts.type(k) == runtime::opt_type::string ? opts.get_string(k).empty()
                                                  : opts.get_list(k).empty()) {
      std::fprintf(stderr, "shadowsync %s: option '%s' is required\n%s\n", name, k, usage);
      return exit_usage;
    }
  runtime::setup_logging(opts.get_string("output.log-level"));
  const auto t0 = std::chrono::steady_clock::now();
  if (auto err = runtime::load_saved_model(opts.get_string("use.model"), model)) {
    spdlog::error("cannot load the model: {}", *err);
    return exit_failure;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  model.cfg.data.strict = opts.get_bool("data.strict");
  if (const auto& user = opts.get_string("data.user"); !user.empty())
    if (auto err = runtime::set_user_column(user, opts.source("data.user"), model.cfg.data.schema)) {
      std::fprintf(stderr, "shadowsync %s: %s\n", name, err->c_str());
      return exit_usage;
    }
  model.cfg.data.whole_lines = true; // the model's layout, or a clear refusal
  spdlog::info("model {} ({} examples trained, {}): loaded {:.1f} MB in {:.2f} s", model.folder,
               model.examples, model.cfg.arch.describe(), double(model.bytes) / 1e6, s);
  return 0;
}

// The output `path` (option `key`) can be written and is neither one of the
// data files nor a file of the model; false after logging why.
bool output_allowed(const char* key, const std::string& path,
                    const std::vector<std::string>& files, const runtime::saved_model& model) {
  runtime::input_files inputs;
  inputs.add(files);
  std::vector<std::string> expanded; // what patterns match, too
  std::string ignored;               // the reader reports a bad entry
  if (data::expand_inputs(files, &expanded, &ignored))
    inputs.add(expanded);
  inputs.add(model.folder);
  if (auto e = runtime::check_output_file(key, path, inputs)) {
    spdlog::error("{}", *e);
    return false;
  }
  return true;
}

} // namespace

int predict_command(const std::vector<std::string>& raw) {
  const char* usage = "usage: shadowsync predict --model=PATH --data=FILE[,FILE...] --out=FILE";
  runtime::option_set opts;
  add_common(opts);
  using t = runtime::opt_type;
  opts.add({"use.data", t::string_list, "[]", "files to score (also --data=FILE,...)"});
  opts.add({"use.out", t::string, "", "write one probability per example here (also --out=FILE)"});
  opts.add({"data.labels", t::string, "auto",
            "do the lines carry the model's label column: yes, no (the layout without it), auto (a "
            "line one field short has none: Criteo's test file)",
            {"auto", "yes", "no"}});
  const auto args =
    rewrite_aliases(raw, {{"model", "use.model"}, {"data", "use.data"}, {"out", "use.out"}});
  runtime::saved_model model;
  if (int rc = prepare("predict", usage, opts, args, {"use.model", "use.data", "use.out"}, model))
    return rc < 0 ? exit_ok : rc;
  const auto& files = opts.get_list("use.data");
  const auto& cfg = model.cfg;
  const auto out_path = opts.get_string("use.out");
  if (!output_allowed("use.out", out_path, files, model))
    return exit_usage;
  std::string err;
  auto ro = runtime::reader_options_for(cfg, files);
  const auto& labels = opts.get_string("data.labels");
  ro.labels = labels == "yes"  ? data::label_presence::required
              : labels == "no" ? data::label_presence::absent
                               : data::label_presence::either;
  auto r = data::reader::open(ro, &err);
  if (!r) {
    spdlog::error("{}", err);
    return exit_failure;
  }
  runtime::replacing_file out_file; // the old --out stays until the last line is written
  if (!out_file.open(out_path, &err)) {
    spdlog::error("{}", err);
    return exit_failure;
  }
  std::FILE* out = out_file.get();
  runtime::progress_reporter progress(opts.get_string("output.progress"),
                                      opts.get_real("output.progress-seconds"), "predict");
  const double bytes = double(runtime::total_bytes(files));
  const auto t0 = std::chrono::steady_clock::now();
  data::batch b;
  model::batch_lookup rows;
  model::workspace ws;
  // With data.user, what the labels say of the scores (AUC, GAUC), if the
  // lines have them. It keeps each labelled example (20 bytes), so a predict
  // without data.user stays streaming.
  model::evaluator ev;
  const bool scored = labels != "no" && cfg.data.schema.user.has_value();
  std::uint64_t n = 0, lookups = 0, missing = 0;
  std::string text;
  while (r->next(b, cfg.train.eval_batch_size)) {
    if (model.dynamic) // model.embedding=dynamic: ids without a row read zeros, counted
      model.dynamic->find(rows, b.cat.data(), b.size,
                          b.multi_hot() ? b.cat_offsets.data() : nullptr, &lookups, &missing);
    else
      rows.lookup(b.cat.data(), b.size, cfg.arch, *model.tables,
                  b.multi_hot() ? b.cat_offsets.data() : nullptr);
    model.net->forward(model.params.data(), b.dense.data(), rows.input(), b.size, ws);
    text.clear();
    for (std::size_t e = 0; e < b.size; ++e) { // shortest text that reads back the same float
      char buf[32];
      const float logit = ws.logits[Eigen::Index(e)];
      if (scored)
        ev.add(logit, b.labels[e], b.users[e]);
      const float p = model::sigmoid(logit);
      const auto res = std::to_chars(buf, buf + sizeof buf, p);
      text.append(buf, res.ptr);
      text.push_back('\n');
    }
    std::fwrite(text.data(), 1, text.size(), out);
    n += b.size;
    b.clear();
    runtime::progress_sample s;
    s.examples = n;
    if (bytes > 0)
      s.fraction_done = double(r->statistics().bytes) / bytes;
    progress.update(s);
  }
  if (!r->error().empty()) {
    spdlog::error("{}", r->error());
    return exit_failure;
  }
  if (!out_file.commit(&err)) {
    spdlog::error("{}", err);
    return exit_failure;
  }
  runtime::log_malformed(*r, "predict");
  runtime::progress_sample s;
  s.examples = n;
  s.fraction_done = 1;
  progress.finish(s);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("{} predictions written to {} in {:.2f} s ({:.0f} examples/s); {} malformed lines "
               "skipped",
               n, out_path, sec, sec > 0 ? double(n) / sec : 0.0, r->statistics().malformed);
  if (model.dynamic)
    spdlog::info("dynamic embeddings: {} of {} lookups ({:.2f}%) were of ids without a row (read "
                 "as zeros)",
                 missing, lookups, lookups ? 100.0 * double(missing) / double(lookups) : 0.0);
  if (scored && n > 0 && r->statistics().unlabelled == 0) { // every line had its label
    const auto m = ev.result();
    spdlog::info("labelled: AUC {:.6f}, GAUC {:.6f} over {} of {} users", m.auc, m.gauc.gauc,
                 m.gauc.counted, m.gauc.users);
  }
  return exit_ok;
}

int eval_command(const std::vector<std::string>& raw) {
  const char* usage = "usage: shadowsync eval --model=PATH --data.eval=FILE[,FILE...] "
                      "[--output.metrics=PATH]";
  runtime::option_set opts;
  add_common(opts);
  using t = runtime::opt_type;
  opts.add({"data.eval", t::string_list, "[]", "labelled files to evaluate on"});
  opts.add({"output.metrics", t::string, "", "write the metrics JSON object here"});
  const auto args = rewrite_aliases(raw, {{"model", "use.model"}});
  runtime::saved_model model;
  if (int rc = prepare("eval", usage, opts, args, {"use.model", "data.eval"}, model))
    return rc < 0 ? exit_ok : rc;
  runtime::run_metrics m;
  m.mode = "eval";
  m.arch = model.cfg.arch_name;
  const auto& files = opts.get_list("data.eval");
  const auto path = opts.get_string("output.metrics");
  if (!output_allowed("output.metrics", path, files, model))
    return exit_usage;
  auto err = model.dynamic
               ? runtime::evaluate_model(model.cfg, *model.net, model.params.data(),
                                         model.params.size(), *model.dynamic, files, m)
               : runtime::evaluate_model(model.cfg, *model.net, model.params.data(),
                                         model.params.size(), *model.tables, files, m);
  if (err) {
    spdlog::error("evaluation failed: {}", *err);
    return exit_failure;
  }
  std::printf("eval of %s on %llu examples: NE %.6f  AUC %.6f  logloss %.6f  calibration %.4f\n",
              model.folder.c_str(), static_cast<unsigned long long>(m.eval->examples),
              m.eval->ne, m.eval->auc, m.eval->logloss, m.eval->calibration);
  if (m.eval->grouped)
    std::printf("GAUC %.6f over %llu of %llu users (those with both classes; %llu examples)\n",
                m.eval->gauc.gauc, static_cast<unsigned long long>(m.eval->gauc.counted),
                static_cast<unsigned long long>(m.eval->gauc.users),
                static_cast<unsigned long long>(m.eval->gauc.examples));
  if (const auto& d = m.embedding)
    std::printf("dynamic embeddings: %llu of %llu lookups (%.2f%%) were of ids without a row\n",
                static_cast<unsigned long long>(d->eval_missing),
                static_cast<unsigned long long>(d->eval_lookups),
                d->eval_lookups ? 100.0 * double(d->eval_missing) / double(d->eval_lookups) : 0.0);
  std::string werr;
  if (!path.empty() && !runtime::write_replacing(path, runtime::to_json(m), &werr)) {
    spdlog::error("cannot write output.metrics: {}", werr);
    return exit_failure;
  }
  return exit_ok;
}

std::vector<std::string> rewrite_aliases(
  const std::vector<std::string>& args,
  const std::vector<std::pair<std::string, std::string>>& aliases) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::string x = a;
    for (const auto& [name, key] : aliases)
      if (a.rfind("--" + name + "=", 0) == 0)
        x = "--" + key + a.substr(2 + name.size());
    out.push_back(std::move(x));
  }
  return out;
}

} // namespace tools
