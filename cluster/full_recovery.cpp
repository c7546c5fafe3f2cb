// Full recovery (see full_recovery.hpp):
//   coordinator -> every role: exit; every role -> coordinator: DOWN
//   coordinator: open the newest cut; the caller rebuilds the cluster from it
#include "cluster/full_recovery.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace runtime {

std::optional<double> young_daly(const train_config& cfg, const cut_totals& cuts) {
  const auto& r = cfg.recovery;
  if (!r.full || r.save_estimate_seconds <= 0 || cuts.cuts == 0)
    return std::nullopt;
  return std::sqrt(2.0 * cuts.seconds / double(cuts.cuts) * r.mtbf_seconds);
}

std::optional<std::string> stop_cluster(caf::blocking_actor* self, const cluster_handles& c,
                                        std::chrono::milliseconds timeout) {
  // Monitored again: a role already down (the lost shard, whose DOWN the
  // coordinator has taken) answers at once. The earlier monitors' DOWNs
  // stay behind, from actors no later attempt knows.
  // The trainers first (their workers and syncers end with them), then the
  // shards they were talking to: a worker's lookup in flight does not meet a
  // shard that is gone, so a stop logs no error. One deadline for both.
  std::vector<caf::actor_addr> up;
  auto stop = [&](const auto& handles) {
    for (const auto& h : handles) {
      up.push_back(h.address());
      self->monitor(h);
      self->send_exit(h, caf::exit_reason::user_shutdown);
    }
  };
  const auto deadline = self->clock().now() + timeout;
  bool late = false;
  auto wait = [&] { // one wait for the DOWNs, bounded by the deadline (no periodic wake-up)
    while (!up.empty() && !late) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
        std::max(deadline - self->clock().now(), caf::actor_clock::duration_type::zero()));
      self->receive(
        [&](caf::down_msg& dm) { up.erase(std::remove(up.begin(), up.end(), dm.source), up.end()); },
        caf::after(left) >> [&] { late = true; });
    }
  };
  stop(c.trainers);
  wait();
  if (!late) {
    stop(c.dense);
    stop(c.shards);
    wait();
  }
  if (!up.empty() || late)
    return std::to_string(up.size()) + " role(s) still up " + std::to_string(timeout.count()) +
           " ms after their exit";
  return std::nullopt;
}

full_recovery::full_recovery(caf::blocking_actor* self, const train_config& cfg,
                             virtual_engine* engine)
    : self_(self), cfg_(cfg), engine_(engine) {}

double full_recovery::since(caf::actor_clock::time_point t) const {
  return std::chrono::duration<double>(self_->clock().now() - t).count();
}

void full_recovery::attempt_began() {
  attempt_ = self_->clock().now();
}

std::optional<std::string> full_recovery::roll_back(const shard_loss& loss,
                                                    const cluster_handles& c,
                                                    const model::dlrm& net,
                                                    const std::string& cut,
                                                    std::optional<cluster_start>& start,
                                                    resume_base& base, bool tables) {
  const double job_at = lost_seconds_ + loss.seconds;
  const std::uint64_t trained = base.examples + loss.examples; // by the job, at the loss
  const auto down = self_->clock().now();
  if (auto e = stop_cluster(self_, c, cfg_.cluster.timeout))
    return loss.why + "; rolling back: " + *e;
  start.reset();
  base = resume_base{};
  std::string from = "the initial model (no cut yet)";
  if (!cut.empty()) {
    auto at = cfg_;
    at.checkpoint.resume = cut;
    const auto t0 = std::chrono::steady_clock::now();
    start.emplace();
    if (auto e = load_cluster_start(at, net, *start, tables))
      return loss.why + "; rolling back: " + *e;
    base.examples = start->examples;
    base.counters = start->counters;
    base.readers = start->readers;
    std::uint64_t bytes = 0;
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(start->folder, ec))
      if (f.path().filename().string().rfind("embedding-", 0) == 0 ||
          f.path().filename().string().rfind("dynamic-", 0) == 0)
        bytes += f.file_size(ec);
    ++loads_;
    load_bytes_ += bytes;
    // The shards reload in parallel, each its part, from the store.
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (engine_) {
      s = double(bytes) / double(std::max<std::size_t>(1, cfg_.cluster.embedding_shards)) /
          (cfg_.recovery.storage_gbps * 1e9);
      bool loaded = false;
      engine_->at(engine_->now() + std::chrono::duration_cast<virtual_engine::duration>(
                                     std::chrono::duration<double>(s)),
                  [&] { loaded = true; });
      engine_->run_until([&] { return loaded; });
    }
    load_seconds_ += s;
    from = start->folder + " (" + std::to_string(start->examples) + " examples)";
  }
  const std::uint64_t redo = trained - std::min(trained, base.examples);
  redone_ += redo;
  outage_seconds_ += since(down);
  lost_seconds_ += since(attempt_);
  char line[512];
  std::snprintf(line, sizeof line,
                "%s at %.3f s: the cluster rolled back to %s in %.3f s; %llu examples to redo",
                loss.why.c_str(), job_at, from.c_str(), since(down),
                static_cast<unsigned long long>(redo));
  events_.push_back(line);
  spdlog::warn("{}", line);
  return std::nullopt;
}

void full_recovery::restarted(double seconds) {
  outage_seconds_ += seconds;
  lost_seconds_ += seconds;
  spdlog::warn("the cluster runs again: the lost node back and every role started again in "
               "{:.3f} s", seconds);
}

void full_recovery::report(run_metrics& out, const resume_base& base,
                           const cut_totals& cuts) const {
  out.seconds += lost_seconds_;
  out.examples += base.examples;
  if (!out.recovery)
    out.recovery.emplace();
  auto& r = *out.recovery;
  r.mode = "full"; // (policy full and fraction 1: the defaults)
  // The cuts' interval at the end (Young/Daly's from the cuts measured).
  r.interval_seconds = young_daly(cfg_, cuts).value_or(cfg_.checkpoint.every_seconds);
  r.mtbf_seconds = cfg_.recovery.mtbf_seconds;
  r.failures = events_.size();
  r.events = events_;
  r.redone_examples = redone_;
  r.outage_seconds = outage_seconds_;
  r.loads = loads_;
  r.load_bytes = load_bytes_;
  r.load_seconds = load_seconds_;
  r.saves = r.full_saves = cuts.cuts;
  r.bytes = cuts.bytes;
  r.save_seconds = cuts.seconds; // a cut pauses the whole cluster: its length
  // The store's share of the job's time (every role waits for a cut and a
  // reload), without the redone work.
  r.overhead_fraction = out.seconds > 0 ? (r.save_seconds + r.load_seconds) / out.seconds : 0;
}

} // namespace runtime
