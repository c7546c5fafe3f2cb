#include "engine/saved_model.hpp"

#include <filesystem>
#include <sstream>

#include <spdlog/spdlog.h>

#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/model_files.hpp"

namespace runtime {

namespace {

// The saved effective INI without the keys that name files of the training
// run (data sets, outputs, checkpoints): they need not exist where the model
// is used, and build_train_config would open them.
std::string without_run_files(const std::string& ini) {
  static const char* dropped[] = {"data.train", "data.eval",        "output.metrics",
                                  "output.config", "output.dir",    "output.model"};
  std::istringstream in(ini);
  std::string line, group, out;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') {
      group = line.substr(1, line.find(']') - 1);
    } else if (auto eq = line.find(" = "); eq != std::string::npos && line[0] != ';') {
      const auto key = group + "." + line.substr(0, eq);
      bool drop = group == "checkpoint";
      for (const char* d : dropped)
        drop = drop || key == d;
      if (drop)
        continue;
    }
    out += line + "\n";
  }
  return out;
}

} // namespace

std::optional<std::string> load_saved_config(const checkpoint::opened_checkpoint& c,
                                             train_config& out) {
  option_set opts;
  add_train_options(opts);
  const auto where = c.folder + "/manifest.json (config)";
  if (auto e = opts.parse_text(without_run_files(c.m.config_ini), where))
    return "the model's configuration does not parse: " + *e;
  if (auto e = build_train_config(opts, out, config_use::saved_model))
    return "the model's configuration is invalid: " + *e;
  return std::nullopt;
}

std::vector<std::string> training_changes(const train_config& saved, const train_config& now) {
  std::vector<std::string> out;
  auto real = [&](const char* key, double a, double b) {
    if (a != b) {
      std::ostringstream os;
      os << key << " " << a << " -> " << b;
      out.push_back(os.str());
    }
  };
  auto text = [&](const char* key, const std::string& a, const std::string& b) {
    if (a != b)
      out.push_back(std::string(key) + " " + a + " -> " + b);
  };
  const auto &s = saved.train, &n = now.train;
  text("train.dense-optimizer", model::to_string(s.dense.kind), model::to_string(n.dense.kind));
  real("train.dense-lr", s.dense.lr, n.dense.lr);
  real("train.dense-warmup", double(s.dense.warmup), double(n.dense.warmup));
  text("train.sparse-optimizer", model::to_string(s.sparse.kind), model::to_string(n.sparse.kind));
  real("train.sparse-lr", s.sparse.lr, n.sparse.lr);
  real("train.adagrad-eps", s.dense.eps, n.dense.eps);
  real("train.batch-size", double(s.batch_size), double(n.batch_size));
  return out;
}

void warn_training_changes(const std::string& path, const train_config& now) {
  checkpoint::opened_checkpoint c;
  if (checkpoint::open_checkpoint(path, c) || c.m.config_ini.empty())
    return; // nothing recorded to compare with
  train_config saved;
  if (auto e = load_saved_config(c, saved)) {
    spdlog::warn("resume from '{}': cannot compare its training settings with this run's: {}",
                 c.folder, *e);
    return;
  }
  for (const auto& change : training_changes(saved, now))
    spdlog::warn("resume from '{}': {} (the checkpoint's run -> this run)", c.folder, change);
}

std::optional<std::string> check_resume_data(const train_config& now) {
  checkpoint::opened_checkpoint c;
  if (now.checkpoint.resume.empty() || checkpoint::open_checkpoint(now.checkpoint.resume, c) ||
      c.m.config_ini.empty())
    return std::nullopt; // the resume itself reports a checkpoint it cannot open
  option_set saved;
  add_train_options(saved);
  if (saved.parse_text(c.m.config_ini, c.folder + "/manifest.json (config)"))
    return std::nullopt; // warn_training_changes says so
  const auto& before = saved.get_list("data.train");
  const auto& after = now.data.train;
  auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code ea, eb;
    const auto ca = std::filesystem::weakly_canonical(a, ea);
    const auto cb = std::filesystem::weakly_canonical(b, eb);
    return ea || eb ? a == b : ca == cb;
  };
  bool same = before.size() == after.size();
  for (std::size_t i = 0; same && i < before.size(); ++i)
    same = same_file(before[i], after[i]);
  if (same)
    return std::nullopt;
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v)
      out += (out.empty() ? "" : ", ") + x;
    return "[" + out + "]" + (v.empty() ? " (the synthetic default set)" : "");
  };
  const auto position = c.m.readers.empty() ? std::string()
                        : " (" + std::to_string(c.m.examples) + " examples, pass " +
                            std::to_string(c.m.readers[0].epoch + 1) + ")";
  if (now.checkpoint.new_data) {
    spdlog::info("resume from '{}'{}: new training files {} (the checkpoint's run read {}), "
                 "trained from their beginning (checkpoint.new-data)",
                 c.folder, position, list(after), list(before));
    return std::nullopt;
  }
  return "option 'checkpoint.resume': '" + c.folder + "'" + position +
         " was trained on data.train = " + list(before) + ", this run reads " + list(after) +
         ": resuming would skip as many examples of the new files as it had read of the old. "
         "Give the same files to finish that run, or --checkpoint.new-data=true to train the "
         "new files from their beginning";
}

std::optional<std::string> load_saved_model(const std::string& path, saved_model& out) {
  checkpoint::opened_checkpoint c;
  if (auto e = checkpoint::open_checkpoint(path, c))
    return e;
  if (auto e = load_saved_config(c, out.cfg))
    return e;
  const auto& a = out.cfg.arch;
  out.folder = c.folder;
  out.examples = c.m.examples;
  out.bytes = 0;
  for (const auto& f : c.m.files)
    out.bytes += f.bytes;
  out.net = std::make_unique<model::dlrm>(a);
  if (out.cfg.embedding.dynamic) { // the rows by id, from any number of files
    out.dynamic = std::make_unique<model::dynamic_tables>(
      a.num_tables, out.cfg.embedding.table, a.dim, out.cfg.train.sparse.state_per_row(a.dim),
      out.cfg.train.seed + 1);
    if (auto e = checkpoint::load_dynamic_tables(c, *out.dynamic))
      return e;
  } else {
    out.tables = std::make_unique<model::embedding_tables>(
      a.num_tables, a.rows_per_table, a.dim, out.cfg.train.sparse.state_per_row(a.dim));
    if (auto e = checkpoint::load_embeddings(c, *out.tables))
      return e;
  }
  std::vector<checkpoint::replica_state> reps;
  if (auto e = checkpoint::load_replicas(c, out.net->layout().size(), reps))
    return e;
  // The same bits as the cluster's own evaluation of its replicas' average.
  const auto avg = checkpoint::average(reps);
  out.params.assign(avg.params.begin(), avg.params.end());
  return std::nullopt;
}

} // namespace runtime
