// output.model of the simulated cluster and of a multi-node run, after
// training has ended (every worker done, every syncer stopped: the state is
// quiescent, so it is a consistent cut without a marker protocol):
//   coordinator -> embedding shard s: save(FOLDER); shard writes
//                  embedding-s.bin itself and replies name, bytes, CRC32C
//                  (multi-node: save(offset) -> the file's pieces, written by
//                  the coordinator: shard_fetch.hpp)
//   coordinator: replica-t.bin of each surviving trainer (from its report:
//                dense parameters and dense optimiser state)
//   coordinator -> dense shard d: dump (the EASGD centre, centre.bin)
//   coordinator: bmuf.bin (BMUF: w_g and Delta from trainer 0's stop report)
// then the manifest and the atomic commit (checkpoint/store.hpp). Eval of a
// saved model uses the average of the replicas.
#include <algorithm>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/model_files.hpp"
#include "cluster/cluster_cut.hpp"
#include "cluster/coordinator.hpp"
#include "cluster/shard_fetch.hpp"

namespace runtime {

checkpoint::run_counters counters_after(const resume_base& base,
                                        const coordination_result& res, const run_metrics& out) {
  auto k = base.counters;
  for (const auto& r : res.reports) {
    k.loss_sum += r.work.loss_sum;
    k.prob_sum += r.work.prob_sum;
    k.positives += r.work.positives;
  }
  k.malformed = out.malformed_lines; // the readers count from their resumed marks
  k.cut_bags = out.cut_bags;
  k.seconds += out.seconds;
  return k;
}

std::optional<std::string> export_cluster_model(caf::blocking_actor* self, const train_config& cfg,
                                                const cluster_handles& c,
                                                const coordination_result& res,
                                                const run_metrics& out, const std::string& dir,
                                                std::size_t keep, const resume_base& base,
                                                const export_options& how) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string label = dir == cfg.checkpoint.model_out ? "output.model" : "checkpoint";
  const auto examples = base.examples + out.examples;
  checkpoint::folder_writer w;
  std::string err;
  if (!w.begin(dir, checkpoint::checkpoint_name(examples), &err))
    return label + ": " + err;
  std::optional<std::string> failure;
  // The centre: the syncers are stopped, so the dense shards are quiescent.
  const std::size_t size = res.reports.empty() ? 0 : res.reports[0].replica.size();
  std::vector<float> centre(c.dense.empty() ? 0 : size);
  if (!centre.empty())
    if (auto e = gather_centre(self, cfg, c, centre))
      failure = label + ": " + *e;
  if (!failure && !centre.empty() && !checkpoint::write_centre(w, centre.data(), size, &err))
    failure = label + ": " + err;
  if (!failure && !res.reports.empty() && !res.reports[0].sync.bmuf_global.values.empty()) {
    const auto& b = res.reports[0].sync; // identical in every syncer after the same rounds
    if (b.bmuf_global.size() != size || b.bmuf_momentum.size() != size)
      failure = label + ": trainer 0 reported a BMUF block state of another size";
    else if (!checkpoint::write_bmuf(w, b.bmuf_global.data(), b.bmuf_momentum.data(), size, &err))
      failure = label + ": " + err;
  }
  for (std::size_t s = 0; s < c.shards.size() && !failure; ++s) {
    if (how.fetch_shards) {
      const auto name = cfg.embedding.dynamic ? checkpoint::dynamic_file_name(s)
                                              : checkpoint::embedding_file_name(s);
      if (auto e = fetch_shard_file(self, c.shards[s], name, cfg.cluster.timeout, w))
        failure = label + ": " + c.shard_names[s] + ": " + *e;
      continue;
    }
    self->request(c.shards[s], cfg.cluster.timeout, messages::save_atom::value, w.folder())
      .receive(
        [&](std::string& name, std::uint64_t bytes, std::uint32_t crc) {
          w.add(checkpoint::file_info{name, bytes, crc});
        },
        [&](caf::error& e) {
          failure = label + ": " + c.shard_names[s] + ": " + self->system().render(e);
        });
  }
  // The replicas in trainer order: the survivors' and, with how.marks, a
  // stand-in for each lost trainer (the survivors' average at its position
  // of the newest cut).
  std::vector<const messages::trainer_report*> by_trainer;
  for (const auto& r : res.reports) {
    if (r.state.size() != r.replica.size())
      failure = "output.model: trainer " + std::to_string(r.trainer) +
                " reported no dense optimiser state";
    by_trainer.push_back(&r);
  }
  std::vector<std::size_t> lost;
  checkpoint::replica_state avg;
  if (how.marks && !res.reports.empty() && res.reports.size() < cfg.cluster.trainers &&
      !failure) {
    by_trainer.assign(cfg.cluster.trainers, nullptr);
    std::vector<checkpoint::replica_state> reps;
    for (const auto& r : res.reports) {
      if (r.trainer < by_trainer.size())
        by_trainer[r.trainer] = &r;
      reps.push_back({r.replica.values, r.state.values});
    }
    avg = checkpoint::average(reps);
    for (std::size_t t = 0; t < by_trainer.size(); ++t)
      if (!by_trainer[t])
        lost.push_back(t);
  }
  checkpoint::manifest m;
  m.config_ini = cfg.checkpoint.effective_ini;
  m.mode = how.mode;
  m.examples = examples;
  m.model_seed = cfg.train.seed;
  m.counters = counters_after(base, res, out);
  for (std::size_t t = 0; t < by_trainer.size() && !failure; ++t) {
    const auto* r = by_trainer[t];
    const auto& params = r ? r->replica.values : avg.params;
    const auto& state = r ? r->state.values : avg.state;
    if (!checkpoint::write_replica(w, t, params.data(), state.data(), params.size(), &err))
      failure = label + ": " + err;
    if (!r) { // lost: its part as at the newest cut
      add_trainer_part(m, t, by_trainer.size(), how.marks->mark(t));
      continue;
    }
    checkpoint::reader_position p;
    p.part = t;
    p.parts = by_trainer.size();
    p.epoch = cfg.train.epochs; // every pass done
    m.readers.push_back(p);
  }
  w.rename(checkpoint::checkpoint_name(m.examples));
  std::string folder;
  if (!failure && !w.commit(m, keep, &folder, &err))
    failure = label + ": " + err;
  if (failure) {
    w.abandon();
    return failure;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string stand_ins;
  for (auto t : lost)
    stand_ins += (stand_ins.empty() ? "; lost, at their position of the newest cut: " : ", ") +
                 c.trainer_names[t];
  spdlog::info("model written to {} ({} embedding shard files, {} replicas) in {:.2f} s{}",
               folder, c.shards.size(), by_trainer.size(), s, stand_ins);
  return std::nullopt;
}

std::optional<std::string> resume_readers(const train_config& cfg,
                                          const checkpoint::opened_checkpoint& c,
                                          std::vector<messages::reader_mark>& readers,
                                          std::uint64_t& passes_done, bool* mid_pass_out) {
  if (c.m.readers.empty())
    return "'" + c.folder + "' has no reader position";
  const std::size_t trainers = cfg.cluster.trainers;
  bool mid_pass = false;
  for (const auto& r : c.m.readers)
    mid_pass = mid_pass || r.examples != 0 || r.epoch != c.m.readers[0].epoch;
  const bool new_data = cfg.checkpoint.new_data; // other files: from their beginning
  mid_pass = mid_pass && !new_data;
  if (mid_pass && c.m.readers.size() != trainers)
    return "'" + c.folder + "' was cut inside a pass with " + std::to_string(c.m.readers.size()) +
           " reader(s); resume it with --cluster.trainers=" +
           std::to_string(c.m.readers.size()) + " (each trainer's reader has its own part of "
           "the data), or from a checkpoint at the end of a pass";
  readers.assign(trainers, messages::reader_mark{});
  for (std::size_t t = 0; t < trainers; ++t) {
    const auto& r = c.m.readers[mid_pass ? t : 0];
    auto& m = readers[t];
    m.epoch = new_data ? 0 : r.epoch;
    if (mid_pass) {
      m.examples = r.examples;
      m.lines = r.lines;
      m.malformed = r.malformed;
      m.served = r.served;
      m.cut_bags = r.cut_bags;
    }
  }
  // (the fewest of any reader: after a trainer's loss its part may lag)
  passes_done = 0;
  if (!new_data) {
    passes_done = c.m.readers[0].epoch;
    for (const auto& r : c.m.readers)
      passes_done = std::min<std::uint64_t>(passes_done, r.epoch);
  }
  if (mid_pass_out)
    *mid_pass_out = mid_pass;
  return std::nullopt;
}

std::optional<std::string> load_cluster_start(const train_config& cfg, const model::dlrm& net,
                                              cluster_start& out, bool with_tables) {
  checkpoint::opened_checkpoint c;
  if (auto e = checkpoint::open_checkpoint(cfg.checkpoint.resume, c))
    return e;
  bool mid_pass = false;
  if (auto e = resume_readers(cfg, c, out.readers, out.passes_done, &mid_pass))
    return e;
  const std::size_t trainers = cfg.cluster.trainers;
  if (!mid_pass && out.passes_done >= cfg.train.epochs)
    return "'" + c.folder + "' has done " + std::to_string(out.passes_done) +
           " passes; train.epochs = " + std::to_string(cfg.train.epochs) +
           " leaves nothing to train (raise train.epochs)";
  const auto& a = cfg.arch;
  std::shared_ptr<model::embedding_tables> tables;
  if (!with_tables) {
    // (a node without embedding shards: no rows)
  } else if (cfg.embedding.dynamic) { // the rows by id, from any number of files
    auto d = std::make_shared<model::dynamic_tables>(
      a.num_tables, cfg.embedding.table, a.dim, cfg.train.sparse.state_per_row(a.dim),
      cfg.train.seed + 1);
    if (auto e = checkpoint::load_dynamic_tables(c, *d, &out.dynamic_counters))
      return e;
    out.dynamic = std::move(d);
  } else {
    tables = std::make_shared<model::embedding_tables>(a.num_tables, a.rows_per_table, a.dim,
                                                       cfg.train.sparse.state_per_row(a.dim));
    if (auto e = checkpoint::load_embeddings(c, *tables))
      return e;
  }
  std::vector<checkpoint::replica_state> reps;
  if (auto e = checkpoint::load_replicas(c, net.layout().size(), reps))
    return e;
  auto avg = checkpoint::average(reps);
  const std::size_t saved_replicas = reps.size();
  if (reps.size() == trainers)
    out.replicas = std::move(reps); // each trainer continues its own replica
  bool found = false;
  if (auto e = checkpoint::load_centre(c, net.layout().size(), out.centre, &found))
    return e;
  if (!found)
    out.centre = avg.params;
  bool bmuf = false;
  if (auto e = checkpoint::load_bmuf(c, net.layout().size(), out.bmuf_global, out.bmuf_momentum,
                                     &bmuf))
    return e;
  std::size_t embedding_files = 0;
  for (const auto& f : c.m.files)
    embedding_files += f.name.rfind("embedding-", 0) == 0 || f.name.rfind("dynamic-", 0) == 0;
  out.params = std::move(avg.params);
  out.state = std::move(avg.state);
  out.tables = std::move(tables);
  out.examples = c.m.examples;
  out.counters = c.m.counters;
  out.folder = c.folder;
  spdlog::info("resuming the cluster from {}: {} examples, {}; {} embedding file(s) re-split over "
               "{} shards; {} replica(s) {} {} trainer(s){}{}",
               c.folder, c.m.examples,
               mid_pass ? "inside pass " + std::to_string(out.passes_done + 1)
                        : std::to_string(out.passes_done) + " passes done",
               embedding_files, cfg.cluster.embedding_shards,
               saved_replicas,
               out.replicas.empty() ? "averaged into" : "restored to", trainers,
               found ? "; the EASGD centre restored" : "",
               bmuf ? "; the BMUF block state restored" : "");
  return std::nullopt;
}

} // namespace runtime
