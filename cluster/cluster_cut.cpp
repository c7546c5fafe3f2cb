// The cuts' bookkeeping and step 6 of a cut (see cluster_cut.hpp): when a
// cut is due, and the files a cut gathered (cut_run.cpp) written and
// committed.
#include "cluster/cluster_cut.hpp"

#include <filesystem>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/model_files.hpp"

namespace runtime {

// Seconds on the coordinator's clock: virtual under sim.clock=virtual, so
// cut times replay with the run.
caf::actor_clock::time_point cluster_checkpointer::now() const {
  return sys_.clock().now();
}

double cluster_checkpointer::since(caf::actor_clock::time_point t) const {
  return std::chrono::duration<double>(now() - t).count();
}

namespace {

// BMUF: w_g and Delta from the holds, identical in every syncer held after
// the same round (their ring all-reduce gives every member the same bits).
std::optional<std::string> write_bmuf_state(checkpoint::folder_writer& w, const cut_commit& job,
                                            std::size_t size) {
  const auto& reports = job.g.reports;
  const auto& names = job.trainer_names;
  if (reports.empty())
    return std::nullopt;
  const auto& h = reports[0].sync;
  for (std::size_t t = 0; t < reports.size(); ++t) {
    const auto& o = reports[t].sync;
    if (o.global.size() != size || o.momentum.size() != size)
      return "checkpoint: " + names[t] + " held a BMUF block state of another size";
    if (o.rounds != h.rounds || o.global.values != h.global.values || o.momentum.values != h.momentum.values)
      return "checkpoint: " + names[t] + " held at round " + std::to_string(o.rounds) +
             " with another BMUF block state than " + names[0] + " at round " +
             std::to_string(h.rounds);
  }
  std::string err;
  if (!checkpoint::write_bmuf(w, h.global.data(), h.momentum.data(), size, &err))
    return "checkpoint: " + err;
  return std::nullopt;
}

} // namespace

cluster_checkpointer::cluster_checkpointer(caf::actor_system& sys, const train_config& cfg,
                                           const cluster_handles& c, const resume_base& base)
    : sys_(sys), cfg_(cfg), c_(c), base_(base), began_(now()), last_(began_),
      every_seconds_(cfg.checkpoint.every_seconds) {
  next_examples_ = cfg.checkpoint.every_examples; // 0: not by examples
  restart_marks();
}

void cluster_checkpointer::restart_marks() {
  marks_.assign(cfg_.cluster.trainers, messages::cut_report{});
  for (std::size_t t = 0; t < marks_.size(); ++t) {
    marks_[t].trainer = std::uint32_t(t);
    if (base_.readers.size() == marks_.size())
      marks_[t].reader = base_.readers[t];
  }
}

void cluster_checkpointer::restart(const resume_base& base) {
  base_ = base;
  restart_marks();
  began_ = last_ = now();
  next_examples_ = cfg_.checkpoint.every_examples;
}

bool cluster_checkpointer::due(std::uint64_t examples) const {
  if (!cfg_.checkpoint.enabled())
    return false;
  const bool by_examples = next_examples_ && examples >= next_examples_;
  const bool by_time = every_seconds_ > 0 && since(last_) >= every_seconds_;
  return by_examples || by_time;
}

void cluster_checkpointer::cut_ended(std::uint64_t examples) {
  while (next_examples_ && next_examples_ <= examples)
    next_examples_ += cfg_.checkpoint.every_examples;
  last_ = now();
}

std::string stopped_text(const std::string& by, std::uint64_t examples,
                         const cluster_checkpointer* ck, std::uint64_t cuts_before) {
  auto t = "stopped by " + by + " after " + std::to_string(examples) + " examples";
  if (!ck)
    return t + "; no checkpoint.dir: nothing kept";
  if (ck->newest().empty())
    return t + "; no checkpoint kept";
  return t + (ck->totals().cuts > cuts_before ? "; the checkpoint of this point: "
                                              : "; the newest checkpoint: ") +
         ck->newest();
}

cut_commit cluster_checkpointer::prepare(cut_gathered g) const {
  cut_commit job;
  auto& m = job.m;
  m.config_ini = cfg_.checkpoint.effective_ini;
  m.mode = mode_;
  m.model_seed = cfg_.train.seed;
  m.examples = base_.examples;
  m.counters = base_.counters;
  m.counters.malformed = 0; // summed in write_cut: the readers count from their resumed marks
  m.counters.cut_bags = 0;
  m.counters.seconds += since(began_);
  job.trainer_names = c_.trainer_names;
  job.bmuf = model::is_bmuf(cfg_.sync.algorithm);
  job.keep = cfg_.checkpoint.keep;
  job.g = std::move(g);
  return job;
}

void add_trainer_part(checkpoint::manifest& m, std::size_t t, std::size_t parts,
                      const messages::cut_report& r) {
  checkpoint::reader_position p;
  p.part = t;
  p.parts = parts;
  p.epoch = r.reader.epoch;
  p.examples = r.reader.examples;
  p.lines = r.reader.lines;
  p.malformed = r.reader.malformed;
  p.served = r.reader.served;
  p.cut_bags = r.reader.cut_bags;
  m.readers.push_back(p);
  m.examples += r.progress.examples;
  m.counters.loss_sum += r.progress.loss_sum;
  m.counters.prob_sum += r.progress.prob_sum;
  m.counters.positives += r.progress.positives;
  m.counters.malformed += r.reader.malformed;
  m.counters.cut_bags += r.reader.cut_bags;
}

std::optional<std::string> write_cut(checkpoint::folder_writer& w, cut_commit& job) {
  const auto& reports = job.g.reports;
  const std::size_t size = reports.empty() ? 0 : reports[0].replica.size();
  const auto& centre = job.g.centre;
  auto& m = job.m;
  std::optional<std::string> failure;
  std::string err;
  for (std::size_t t = 0; t < reports.size() && !failure; ++t) {
    const auto& r = reports[t];
    if (r.replica.size() != size || r.state.size() != size) {
      failure = "checkpoint: " + job.trainer_names[t] + " reported a replica of another size";
      break;
    }
    if (!checkpoint::write_replica(w, t, r.replica.data(), r.state.data(), size, &err))
      failure = "checkpoint: " + err;
    add_trainer_part(m, t, reports.size(), r);
    job.max_pause = std::max(job.max_pause, r.pause_seconds);
  }
  if (!failure && !centre.empty() && !checkpoint::write_centre(w, centre.data(), size, &err))
    failure = "checkpoint: " + err;
  if (!failure && job.bmuf)
    failure = write_bmuf_state(w, job, size);
  w.rename(checkpoint::checkpoint_name(m.examples));
  if (!failure && !w.commit(m, job.keep, &job.folder, &err))
    failure = "checkpoint: " + err;
  if (failure) {
    w.abandon();
    return failure;
  }
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(job.folder, ec))
    job.bytes += f.is_regular_file(ec) ? f.file_size(ec) : 0;
  return std::nullopt;
}

std::optional<std::string> cluster_checkpointer::stand_in(cut_gathered& g,
                                                           const std::vector<bool>& lost) const {
  auto& reports = g.reports;
  std::vector<std::size_t> live;
  for (std::size_t t = 0; t < reports.size(); ++t)
    if (t >= lost.size() || !lost[t])
      live.push_back(t);
  if (live.empty())
    return std::string("checkpoint: no live trainer to take a cut of");
  if (live.size() == reports.size())
    return std::nullopt;
  // The live replicas' average (as a resume averages them).
  const auto& first = reports[live[0]];
  std::vector<checkpoint::replica_state> reps;
  for (auto t : live) {
    const auto& r = reports[t];
    if (r.replica.size() != first.replica.size() || r.state.size() != first.replica.size())
      return "checkpoint: " + c_.trainer_names[t] + " reported a replica of another size";
    reps.push_back({r.replica.values, r.state.values});
  }
  const auto avg = checkpoint::average(reps);
  for (std::size_t t = 0; t < reports.size(); ++t) {
    if (t >= lost.size() || !lost[t])
      continue;
    auto& r = reports[t];
    r = t < marks_.size() ? marks_[t] : messages::cut_report{};
    r.trainer = std::uint32_t(t);
    r.replica.values = avg.params;
    r.state.values = avg.state;
    r.sync = first.sync; // (BMUF: identical in every held syncer)
    r.pause_seconds = 0;
    g.stand_ins.push_back(t);
  }
  return std::nullopt;
}

void cluster_checkpointer::committed(const cut_commit& job) {
  const auto& g = job.g;
  for (const auto& r : g.reports)
    if (r.trainer < marks_.size()) {
      auto& m = marks_[r.trainer];
      m.trainer = r.trainer;
      m.reader = r.reader;
      m.progress = r.progress;
    }
  std::string stand_ins;
  for (auto t : g.stand_ins)
    stand_ins += (stand_ins.empty() ? "; lost, at their position of the cut before: "
                                    : ", ") + c_.trainer_names[t];
  const double s = since(g.began);
  newest_ = job.folder;
  ++totals_.cuts;
  totals_.bytes += job.bytes;
  totals_.seconds += s;
  totals_.max_pause = std::max(totals_.max_pause, job.max_pause);
  totals_.pushes_held += g.pushes_held;
  totals_.rows_copied += g.rows_copied;
  spdlog::info("checkpoint {}: {} examples, cut while training; {:.1f} MB in {:.2f} s; workers "
               "paused at most {:.1f} ms; {} pushes held for the alignment, {} rows copied on "
               "write{}",
               job.folder, job.m.examples, double(job.bytes) / 1e6, s, 1e3 * job.max_pause,
               g.pushes_held, g.rows_copied, stand_ins);
}

std::optional<std::string> cluster_checkpointer::commit(checkpoint::folder_writer& w,
                                                        cut_gathered g) {
  auto job = prepare(std::move(g));
  if (auto e = write_cut(w, job))
    return e;
  committed(job);
  return std::nullopt;
}

} // namespace runtime
