// Checkpoints of the sequential engine: one embedding file (shard 0 of 1),
// one dense replica with its optimiser state, and the manifest with the
// reader's position and the counters. The engine is single-threaded, so the
// state between two batches is a consistent cut by construction; every
// checkpoint is written by checkpoint::background_writer, joined at once when
// training is to wait for it.
#include <chrono>

#include <spdlog/spdlog.h>

#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/model_files.hpp"
#include "engine/sequential_engine.hpp"

namespace runtime {

checkpoint::manifest sequential_engine::manifest_at(std::uint64_t epoch,
                                                    std::uint64_t pass_examples,
                                                    const data::reader* pass,
                                                    std::uint64_t examples,
                                                    const model::ne_accumulator& ne,
                                                    const input_counts& before,
                                                    double seconds) const {
  checkpoint::manifest m;
  m.config_ini = cfg_.checkpoint.effective_ini;
  m.mode = "sequential";
  m.examples = examples;
  checkpoint::reader_position p;
  p.epoch = epoch;
  p.examples = pass_examples;
  p.lines = pass ? pass->statistics().lines : 0;
  p.malformed = before.malformed;
  p.cut_bags = before.cut_bags;
  m.readers = {p};
  m.model_seed = cfg_.train.seed;
  m.counters.loss_sum = ne.loss_sum;
  m.counters.prob_sum = ne.pred_sum;
  m.counters.positives = ne.positives;
  auto all = before;
  if (pass)
    all.add(pass->statistics());
  m.counters.malformed = all.malformed;
  m.counters.cut_bags = all.cut_bags;
  m.counters.seconds = seconds;
  return m;
}

std::optional<std::string> sequential_engine::start_checkpoint(const std::string& dir,
                                                               std::size_t keep,
                                                               checkpoint::manifest m) {
  if (auto e = finish_checkpoint())
    return e;
  if (dynamic_)
    return save_dynamic(dir, keep, std::move(m));
  checkpoint::background_writer::job j;
  j.dir = dir;
  j.keep = keep;
  j.manifest = std::move(m);
  j.params.assign(params_.begin(), params_.end());
  j.state.assign(dense_acc_.begin(), dense_acc_.end());
  j.on_committed = [](const std::string& line) { spdlog::info("{}", line); };
  bg_ = std::make_unique<checkpoint::background_writer>(std::move(j), tables_);
  return std::nullopt;
}

// Dynamic tables are written at once (checkpoint.background has no
// copy-on-write for them): cluster.embedding-shards files placed by id
// (checkpoint/dynamic_files.hpp), so a resume may read them into another
// number of shards.
std::optional<std::string> sequential_engine::save_dynamic(const std::string& dir,
                                                          std::size_t keep,
                                                          checkpoint::manifest m) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t examples = m.examples;
  checkpoint::folder_writer w;
  std::string err, folder;
  if (!w.begin(dir, checkpoint::checkpoint_name(examples), &err) ||
      !checkpoint::write_dynamic_tables(w, *dynamic_, cfg_.cluster.embedding_shards, &err) ||
      !checkpoint::write_replica(w, 0, params_.data(), dense_acc_.data(), params_.size(), &err) ||
      !w.commit(std::move(m), keep, &folder, &err)) {
    w.abandon();
    return "checkpoint: " + err;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("checkpoint {}: {} examples, dynamic tables in {} files, {:.2f} s", folder,
               examples, cfg_.cluster.embedding_shards, s);
  return std::nullopt;
}

std::optional<std::string> sequential_engine::finish_checkpoint() {
  if (!bg_)
    return std::nullopt;
  auto e = bg_->finish();
  bg_.reset();
  return e;
}

std::optional<std::string> sequential_engine::save(const std::string& dir, std::size_t keep,
                                                   checkpoint::manifest m) {
  if (auto e = start_checkpoint(dir, keep, std::move(m)))
    return e;
  return finish_checkpoint();
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
  if (auto e = dynamic_ ? checkpoint::load_dynamic_tables(c, *dynamic_)
                        : checkpoint::load_embeddings(c, tables_))
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
  if (cfg_.checkpoint.new_data) // other files: from their beginning (check_resume_data)
    start_.reader = checkpoint::reader_position{};
  start_.examples = c.m.examples;
  trained_ = c.m.examples;
  start_.ne.loss_sum = c.m.counters.loss_sum;
  start_.ne.pred_sum = c.m.counters.prob_sum;
  start_.ne.count = c.m.examples;
  start_.ne.positives = c.m.counters.positives;
  start_.before = {r.malformed, r.cut_bags};
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
