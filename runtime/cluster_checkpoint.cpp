// output.model of the simulated cluster, after training has ended (every
// worker done, every syncer stopped: the state is quiescent, so it is a
// consistent cut without a marker protocol):
//   coordinator -> embedding shard s: save(FOLDER); shard writes
//                  embedding-s.bin itself and replies name, bytes, CRC32C
//   coordinator: replica-t.bin of each surviving trainer (from its report:
//                dense parameters and dense optimiser state)
// then the manifest and the atomic commit (checkpoint/store.hpp). The EASGD
// centre and the BMUF block state are not saved yet (eval of a saved model
// uses the average of the replicas).
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/model_files.hpp"
#include "runtime/coordinator.hpp"

namespace runtime {

std::optional<std::string> export_cluster_model(caf::scoped_actor& self, const train_config& cfg,
                                                const cluster_handles& c,
                                                const coordination_result& res,
                                                const run_metrics& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& dir = cfg.checkpoint.model_out;
  checkpoint::folder_writer w;
  std::string err;
  if (!w.begin(dir, checkpoint::checkpoint_name(out.examples), &err))
    return "output.model: " + err;
  std::optional<std::string> failure;
  for (std::size_t s = 0; s < c.shards.size() && !failure; ++s)
    self->request(c.shards[s], cfg.cluster.timeout, messages::save_atom::value, w.folder())
      .receive(
        [&](std::string& name, std::uint64_t bytes, std::uint32_t crc) {
          w.add(checkpoint::file_info{name, bytes, crc});
        },
        [&](caf::error& e) {
          failure = "output.model: " + c.shard_names[s] + ": " + self->system().render(e);
        });
  for (std::size_t t = 0; t < res.reports.size() && !failure; ++t) {
    const auto& r = res.reports[t];
    if (r.state.size() != r.replica.size())
      failure = "output.model: trainer " + std::to_string(r.trainer) +
                " reported no dense optimiser state";
    else if (!checkpoint::write_replica(w, t, r.replica.data(), r.state.data(), r.replica.size(),
                                        &err))
      failure = "output.model: " + err;
  }
  checkpoint::manifest m;
  m.config_ini = cfg.checkpoint.effective_ini;
  m.mode = "simulated";
  m.examples = out.examples;
  for (std::size_t t = 0; t < res.reports.size(); ++t) {
    checkpoint::reader_position p;
    p.part = t;
    p.parts = res.reports.size();
    p.epoch = cfg.train.epochs; // every pass done
    m.readers.push_back(p);
  }
  m.model_seed = cfg.train.seed;
  m.counters.malformed = out.malformed_lines;
  m.counters.seconds = out.seconds;
  std::string folder;
  if (!failure && !w.commit(m, 1, &folder, &err))
    failure = "output.model: " + err;
  if (failure) {
    w.abandon();
    return failure;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("model written to {} ({} embedding shard files, {} replicas) in {:.2f} s", folder,
               c.shards.size(), res.reports.size(), s);
  return std::nullopt;
}

std::optional<std::string> load_cluster_start(const train_config& cfg, const model::dlrm& net,
                                              cluster_start& out) {
  checkpoint::opened_checkpoint c;
  if (auto e = checkpoint::open_checkpoint(cfg.checkpoint.resume, c))
    return e;
  if (c.m.readers.empty())
    return "'" + c.folder + "' has no reader position";
  out.passes_done = c.m.readers[0].epoch;
  for (const auto& r : c.m.readers)
    if (r.examples != 0 || r.epoch != out.passes_done)
      return "'" + c.folder + "' was cut " + std::to_string(r.examples) + " examples into pass " +
             std::to_string(r.epoch + 1) + ": the simulated cluster resumes only from a "
             "checkpoint at the end of a pass (its data is split differently)";
  if (out.passes_done >= cfg.train.epochs)
    return "'" + c.folder + "' has done " + std::to_string(out.passes_done) +
           " passes; train.epochs = " + std::to_string(cfg.train.epochs) +
           " leaves nothing to train (raise train.epochs)";
  const auto& a = cfg.arch;
  auto tables = std::make_shared<model::embedding_tables>(
    a.num_tables, a.rows_per_table, a.dim, cfg.train.sparse.state_per_row(a.dim));
  if (auto e = checkpoint::load_embeddings(c, *tables))
    return e;
  std::vector<checkpoint::replica_state> reps;
  if (auto e = checkpoint::load_replicas(c, net.layout().size(), reps))
    return e;
  auto avg = checkpoint::average(reps);
  out.params = std::move(avg.params);
  out.state = std::move(avg.state);
  out.tables = std::move(tables);
  out.examples = c.m.examples;
  out.folder = c.folder;
  spdlog::info("resuming the cluster from {}: {} examples, {} passes done; {} embedding files "
               "re-split over {} shards, {} replicas averaged into {} trainers",
               c.folder, c.m.examples, out.passes_done,
               c.m.files.size() - reps.size(), cfg.cluster.embedding_shards, reps.size(),
               cfg.cluster.trainers);
  return std::nullopt;
}

} // namespace runtime
