// A consistent cut of the running simulated cluster (see cluster_cut.hpp):
//   coordinator -> trainer: sync (ring: rounds)
//   coordinator -> embedding shard: cut(N, FOLDER, W)   (replies when written)
//   coordinator -> trainer: cut(N, last)                 (replies cut_report)
//   coordinator -> dense shard: dump                     (EASGD centre)
//   coordinator -> trainer: resume                       (releases its syncer)
#include "cluster/cluster_cut.hpp"

#include <filesystem>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/model_files.hpp"

namespace runtime {

namespace {

// Seconds on the coordinator's clock: virtual under sim.clock=virtual, so
// cut times replay with the run.
double since(caf::blocking_actor* self, caf::actor_clock::time_point t) {
  return std::chrono::duration<double>(self->clock().now() - t).count();
}

} // namespace

// BMUF: w_g and Delta from the holds, identical in every syncer held after
// the same round (their ring all-reduce gives every member the same bits).
std::optional<std::string>
cluster_checkpointer::write_bmuf_state(checkpoint::folder_writer& w,
                                       const std::vector<messages::cut_report>& reports,
                                       std::size_t size) {
  if (reports.empty())
    return std::nullopt;
  const auto& h = reports[0].sync;
  for (std::size_t t = 0; t < reports.size(); ++t) {
    const auto& o = reports[t].sync;
    if (o.global.size() != size || o.momentum.size() != size)
      return "checkpoint: " + c_.trainer_names[t] + " held a BMUF block state of another size";
    if (o.rounds != h.rounds || o.global.values != h.global.values || o.momentum.values != h.momentum.values)
      return "checkpoint: " + c_.trainer_names[t] + " held at round " +
             std::to_string(o.rounds) + " with another BMUF block state than " +
             c_.trainer_names[0] + " at round " + std::to_string(h.rounds);
  }
  std::string err;
  if (!checkpoint::write_bmuf(w, h.global.data(), h.momentum.data(), size, &err))
    return "checkpoint: " + err;
  return std::nullopt;
}

cluster_checkpointer::cluster_checkpointer(caf::blocking_actor* self, const train_config& cfg,
                                           const cluster_handles& c,
                                           const coordination_result& res,
                                           const resume_base& base)
    : self_(self), cfg_(cfg), c_(c), res_(res), base_(base), began_(self->clock().now()),
      last_(began_), every_seconds_(cfg.checkpoint.every_seconds) {
  next_examples_ = cfg.checkpoint.every_examples; // 0: not by examples
}

void cluster_checkpointer::restart(const resume_base& base) {
  base_ = base;
  began_ = last_ = self_->clock().now();
  next_examples_ = cfg_.checkpoint.every_examples;
}

std::optional<std::string> cluster_checkpointer::maybe_cut(std::uint64_t examples) {
  const auto& ck = cfg_.checkpoint;
  if (!ck.enabled())
    return std::nullopt;
  const bool by_examples = next_examples_ && examples >= next_examples_;
  const bool by_time = every_seconds_ > 0 && since(self_, last_) >= every_seconds_;
  if (!by_examples && !by_time)
    return std::nullopt;
  auto e = cut();
  while (next_examples_ && next_examples_ <= examples)
    next_examples_ += ck.every_examples;
  last_ = self_->clock().now();
  return e;
}

std::optional<std::string> cluster_checkpointer::aim_ring(std::uint64_t* round) {
  const auto timeout = cfg_.cluster.timeout;
  const auto& syncers = res_.syncers; // wired before training, in trainer order
  // No syncer starts a round beyond its reply, so aiming them all at the
  // largest reply of the first pass gets that round from every one in the
  // second (see shadow_syncer.hpp); a third pass is never needed.
  std::uint64_t target = 0;
  for (int pass = 0; pass < 2; ++pass) {
    std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
    for (std::size_t t = 0; t < syncers.size(); ++t) {
      std::optional<std::string> failure;
      self_->request(caf::actor_cast<actors::syncer_actor>(syncers[t]), timeout,
                     messages::aim_atom::value, target)
        .receive(
          [&](std::uint64_t r) {
            lo = std::min(lo, r);
            hi = std::max(hi, r);
          },
          [&](caf::error& e) {
            failure = c_.trainer_names[t] + "'s syncer: " + self_->system().render(e);
          });
      if (failure)
        return failure;
    }
    target = hi;
    if (lo == hi) {
      *round = target;
      return std::nullopt;
    }
  }
  return "the ring's syncers did not agree on a round to hold at (last aim: round " +
         std::to_string(target) + ")";
}

std::optional<std::string> cluster_checkpointer::cut() {
  const auto t0 = self_->clock().now();
  const auto timeout = cfg_.cluster.timeout;
  const auto id = ++id_;
  std::optional<std::string> failure;
  auto fail = [&](const std::string& who, const caf::error& e) {
    if (!failure)
      failure = "checkpoint: " + who + ": " + self_->system().render(e);
  };
  // 1. Ring methods: one common round to hold at. EASGD and none: 0 (a
  // syncer holds after the exchange in flight).
  std::uint64_t last = 0;
  if (model::uses_ring(cfg_.sync.algorithm))
    if (auto e = aim_ring(&last))
      return "checkpoint: " + *e;
  checkpoint::folder_writer w;
  std::string err;
  if (!w.begin(cfg_.checkpoint.dir, ".cut", &err))
    return "checkpoint: " + err;
  // 2. The shards first: they align on the workers' markers.
  const auto workers = std::uint32_t(cfg_.cluster.trainers * cfg_.cluster.workers);
  using shard_handle = decltype(self_->request(c_.shards[0], timeout, messages::cut_atom::value,
                                               id, std::string{}, workers));
  std::vector<shard_handle> shard_replies;
  for (const auto& s : c_.shards)
    shard_replies.push_back(
      self_->request(s, timeout, messages::cut_atom::value, id, w.folder(), workers));
  // 3. The trainers.
  std::vector<messages::cut_report> reports(c_.trainers.size());
  for (std::size_t t = 0; t < c_.trainers.size(); ++t)
    self_->request(c_.trainers[t], timeout, messages::cut_atom::value, id, last)
      .receive([&](messages::cut_report& r) { reports[t] = std::move(r); },
               [&](caf::error& e) { fail(c_.trainer_names[t], e); });
  // 5. The EASGD centre while every syncer is held; then the syncers go on.
  const std::size_t size = reports.empty() ? 0 : reports[0].replica.size();
  std::vector<float> centre(c_.dense.empty() ? 0 : size);
  if (!failure && !centre.empty())
    if (auto e = gather_centre(self_, cfg_, c_, centre))
      failure = "checkpoint: " + *e;
  for (const auto& t : c_.trainers)
    self_->send(t, messages::resume_atom::value);
  // A trainer failed: the job ends (or, under full recovery, rolls back).
  // Its shard replies are not awaited: a shard lost with it, holding the
  // request, would never answer (CAF 0.17 sends nothing for a dropped
  // promise), and a live one may still be writing into the temporary
  // folder, which the next commit removes.
  if (failure)
    return failure;
  // 4. The shards' files.
  std::uint64_t pushes_held = 0, rows_copied = 0;
  for (std::size_t s = 0; s < shard_replies.size(); ++s)
    shard_replies[s].receive(
      [&](messages::shard_cut_file& f) {
        w.add(checkpoint::file_info{f.name, f.bytes, f.crc32c});
        pushes_held += f.pushes_held;
        rows_copied += f.rows_copied;
      },
      [&](caf::error& e) { fail(c_.shard_names[s], e); });
  // 6. Replicas, centre, manifest, commit.
  checkpoint::manifest m;
  m.config_ini = cfg_.checkpoint.effective_ini;
  m.mode = "simulated";
  m.model_seed = cfg_.train.seed;
  m.examples = base_.examples;
  m.counters = base_.counters;
  m.counters.malformed = 0; // summed below: the readers count from their resumed marks
  m.counters.seconds += since(self_, began_);
  double max_pause = 0;
  for (std::size_t t = 0; t < reports.size() && !failure; ++t) {
    const auto& r = reports[t];
    if (r.replica.size() != size || r.state.size() != size) {
      failure = "checkpoint: " + c_.trainer_names[t] + " reported a replica of another size";
      break;
    }
    if (!checkpoint::write_replica(w, t, r.replica.data(), r.state.data(), size, &err))
      failure = "checkpoint: " + err;
    checkpoint::reader_position p;
    p.part = t;
    p.parts = reports.size();
    p.epoch = r.reader.epoch;
    p.examples = r.reader.examples;
    p.lines = r.reader.lines;
    p.malformed = r.reader.malformed;
    p.served = r.reader.served;
    m.readers.push_back(p);
    m.examples += r.progress.examples;
    m.counters.loss_sum += r.progress.loss_sum;
    m.counters.prob_sum += r.progress.prob_sum;
    m.counters.positives += r.progress.positives;
    m.counters.malformed += r.reader.malformed;
    max_pause = std::max(max_pause, r.pause_seconds);
  }
  if (!failure && !centre.empty() && !checkpoint::write_centre(w, centre.data(), size, &err))
    failure = "checkpoint: " + err;
  if (!failure && model::is_bmuf(cfg_.sync.algorithm))
    failure = write_bmuf_state(w, reports, size);
  std::string folder;
  w.rename(checkpoint::checkpoint_name(m.examples));
  if (!failure && !w.commit(m, cfg_.checkpoint.keep, &folder, &err))
    failure = "checkpoint: " + err;
  if (failure) {
    w.abandon();
    return failure;
  }
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(folder, ec))
    bytes += f.is_regular_file(ec) ? f.file_size(ec) : 0;
  const double s = since(self_, t0);
  newest_ = folder;
  ++totals_.cuts;
  totals_.bytes += bytes;
  totals_.seconds += s;
  totals_.max_pause = std::max(totals_.max_pause, max_pause);
  totals_.pushes_held += pushes_held;
  totals_.rows_copied += rows_copied;
  spdlog::info("checkpoint {}: {} examples, cut while training; {:.1f} MB in {:.2f} s; workers "
               "paused at most {:.1f} ms; {} pushes held for the alignment, {} rows copied on "
               "write",
               folder, m.examples, double(bytes) / 1e6, s, 1e3 * max_pause, pushes_held,
               rows_copied);
  return std::nullopt;
}

} // namespace runtime
