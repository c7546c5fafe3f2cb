#include "runtime/saved_model.hpp"

#include <sstream>

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

std::optional<std::string> load_saved_model(const std::string& path, saved_model& out) {
  checkpoint::opened_checkpoint c;
  if (auto e = checkpoint::open_checkpoint(path, c))
    return e;
  option_set opts;
  add_train_options(opts);
  const auto where = c.folder + "/manifest.json (config)";
  if (auto e = opts.parse_text(without_run_files(c.m.config_ini), where))
    return "the model's configuration does not parse: " + *e;
  if (auto e = build_train_config(opts, out.cfg))
    return "the model's configuration is invalid: " + *e;
  const auto& a = out.cfg.arch;
  out.folder = c.folder;
  out.examples = c.m.examples;
  out.bytes = 0;
  for (const auto& f : c.m.files)
    out.bytes += f.bytes;
  out.net = std::make_unique<model::dlrm>(a);
  out.tables = std::make_unique<model::embedding_tables>(
    a.num_tables, a.rows_per_table, a.dim, out.cfg.train.sparse.state_per_row(a.dim));
  if (auto e = checkpoint::load_embeddings(c, *out.tables))
    return e;
  std::vector<checkpoint::replica_state> reps;
  if (auto e = checkpoint::load_replicas(c, out.net->layout().size(), reps))
    return e;
  // The same bits as the cluster's own evaluation of its replicas' average.
  const auto avg = checkpoint::average(reps);
  out.params.assign(avg.params.begin(), avg.params.end());
  return std::nullopt;
}

} // namespace runtime
