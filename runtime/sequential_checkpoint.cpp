// Checkpoints of the sequential engine: one embedding file (shard 0 of 1),
// one dense replica with its optimiser state, and the manifest with the
// reader's position and the counters. The engine is single-threaded, so the
// state between two batches is a consistent cut by construction.
#include <chrono>

#include <spdlog/spdlog.h>

#include "checkpoint/model_files.hpp"
#include "runtime/sequential_engine.hpp"

namespace runtime {

checkpoint::manifest sequential_engine::manifest_at(std::uint64_t epoch,
                                                    std::uint64_t pass_examples,
                                                    std::uint64_t pass_lines,
                                                    std::uint64_t examples,
                                                    const model::ne_accumulator& ne,
                                                    std::uint64_t malformed,
                                                    std::uint64_t pass_malformed,
                                                    double seconds) const {
  checkpoint::manifest m;
  m.config_ini = cfg_.checkpoint.effective_ini;
  m.mode = "sequential";
  m.examples = examples;
  checkpoint::reader_position p;
  p.epoch = epoch;
  p.examples = pass_examples;
  p.lines = pass_lines;
  p.malformed = malformed;
  m.readers = {p};
  m.model_seed = cfg_.train.seed;
  m.counters.loss_sum = ne.loss_sum;
  m.counters.prob_sum = ne.pred_sum;
  m.counters.positives = ne.positives;
  m.counters.malformed = malformed + pass_malformed;
  m.counters.seconds = seconds;
  return m;
}

std::optional<std::string> sequential_engine::save(const std::string& dir, std::size_t keep,
                                                   checkpoint::manifest m) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& a = cfg_.arch;
  checkpoint::folder_writer w;
  std::string err, folder;
  if (!w.begin(dir, checkpoint::checkpoint_name(m.examples), &err))
    return "checkpoint: " + err;
  if (!checkpoint::write_embedding_tables(w, tables_, a.num_tables, a.rows_per_table, &err) ||
      !checkpoint::write_replica(w, 0, params_.data(), dense_acc_.data(), params_.size(), &err) ||
      !w.commit(m, keep, &folder, &err)) {
    w.abandon();
    return "checkpoint: " + err;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double mb = double(tables_.bytes() + 2 * params_.size() * sizeof(float)) / 1e6;
  spdlog::info("checkpoint {}: {} examples, {:.1f} MB in {:.2f} s ({:.0f} MB/s)", folder,
               m.examples, mb, s, s > 0 ? mb / s : 0.0);
  return std::nullopt;
}

std::optional<std::string> sequential_engine::restore(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  checkpoint::opened_checkpoint c;
  if (auto e = checkpoint::open_checkpoint(path, c))
    return e;
  if (c.m.mode != "sequential" || c.m.readers.size() != 1)
    return "'" + c.folder + "' is a checkpoint of a " + c.m.mode + " run with " +
           std::to_string(c.m.readers.size()) + " readers; sequential mode resumes from "
           "sequential checkpoints";
  const auto& a = cfg_.arch;
  if (auto e = checkpoint::load_embeddings(c, tables_, a.num_tables, a.rows_per_table))
    return e;
  std::vector<checkpoint::replica_state> reps;
  if (auto e = checkpoint::load_replicas(c, params_.size(), reps))
    return e;
  if (reps.size() != 1)
    return "'" + c.folder + "' holds " + std::to_string(reps.size()) +
           " dense replicas; a sequential checkpoint has one";
  params_.assign(reps[0].params.begin(), reps[0].params.end());
  dense_acc_.assign(reps[0].state.begin(), reps[0].state.end());
  const auto& r = c.m.readers[0];
  start_.reader = r;
  start_.examples = c.m.examples;
  start_.ne.loss_sum = c.m.counters.loss_sum;
  start_.ne.pred_sum = c.m.counters.prob_sum;
  start_.ne.count = c.m.examples;
  start_.ne.positives = c.m.counters.positives;
  start_.malformed = r.malformed;
  start_.seconds = c.m.counters.seconds;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::uint64_t bytes = 0;
  for (const auto& f : c.m.files)
    bytes += f.bytes;
  spdlog::info("resuming from {}: {} examples done, pass {} at example {}; loaded {:.1f} MB in "
               "{:.2f} s ({:.0f} MB/s)",
               c.folder, c.m.examples, r.epoch + 1, r.examples, double(bytes) / 1e6, s,
               s > 0 ? double(bytes) / 1e6 / s : 0.0);
  return std::nullopt;
}

} // namespace runtime
