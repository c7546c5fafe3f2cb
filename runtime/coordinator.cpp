// The coordinator's protocol (see coordinator.hpp):
//   coordinator -> trainer: peers (its syncer), start, stats, sync, stop(last)
//   coordinator -> syncer: peers(rank, all) / peers(generation, rank, survivors)
//   coordinator -> shards: dump (evaluation)
#include "runtime/coordinator.hpp"

#include <chrono>
#include <functional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/sim_host.hpp"
#include "runtime/cluster_metrics.hpp"
#include "runtime/input.hpp"
#include "runtime/timeline.hpp"

namespace runtime {

namespace {

using namespace actors;
using clock_type = std::chrono::steady_clock;

class coordinator_run {
public:
  coordinator_run(caf::blocking_actor* self, const train_config& cfg, const cluster_handles& c,
                  const coordinator_options& opts)
    : alive_(c.trainers.size(), true), recovery(self, c, opts.restart_shard), self_(self),
      cfg_(cfg), c_(c), opts_(opts) {}

  std::vector<bool> alive_; // per trainer: not lost
  std::optional<std::string> failure;
  std::vector<std::string> lost;
  shard_recovery recovery;

  void monitor_all() {
    for (auto& t : c_.trainers)
      self_->monitor(t);
    for (auto& s : c_.shards)
      self_->monitor(s);
    for (auto& d : c_.dense)
      self_->monitor(d);
    for (auto& n : c_.nodes)
      self_->monitor(caf::actor_cast<caf::actor>(n.agent));
    t0_ = self_->clock().now();
  }

  // Sends xs to every live trainer and collects one reply from each, in trainer
  // order (replies[i] stays default for trainers lost on the way).
  template <class Reply, class... Ts>
  void ask_all(std::vector<Reply>& replies, std::chrono::milliseconds timeout,
               const std::function<void()>& on_idle, Ts... xs) {
    replies.assign(c_.trainers.size(), Reply{});
    got_.assign(c_.trainers.size(), false);
    for (std::size_t i = 0; i < c_.trainers.size(); ++i)
      if (alive_[i])
        self_->send(c_.trainers[i], xs...);
    auto deadline = self_->clock().now() + timeout;
    while (!failure && pending() > 0) {
      self_->receive(
        [&](Reply& r) {
          auto i = trainer_index(self_->current_sender());
          if (i < got_.size() && !got_[i]) {
            got_[i] = true;
            replies[i] = std::move(r);
          }
        },
        [&](caf::error& err) {
          auto i = trainer_index(self_->current_sender());
          failure = (i < c_.trainers.size() ? c_.trainer_names[i] : std::string{"a trainer"}) +
                    ": " + self_->system().render(err);
        },
        [&](caf::down_msg& dm) { on_down(dm); },
        caf::after(opts_.poll_interval) >> [&] {
          if (on_idle)
            on_idle();
          if (self_->clock().now() > deadline)
            failure = "no reply from " + missing() + " within " +
                      std::to_string(timeout.count()) + " ms";
        });
    }
  }

  // Ring wiring: every live syncer gets the live ones in trainer order.
  void wire_ring(const std::vector<caf::strong_actor_ptr>& syncers) {
    syncers_ = syncers;
    if (!model::uses_ring(cfg_.sync.algorithm))
      return;
    for (std::size_t i = 0; i < syncers_.size(); ++i)
      self_->send(caf::actor_cast<syncer_actor>(syncers_[i]), peers_atom::value,
                  std::uint32_t(i), syncers_);
  }

  bool stopping = false; // the coordinated stop has begun

private:
  std::size_t pending() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < alive_.size(); ++i)
      n += alive_[i] && !got_[i];
    return n;
  }

  std::string missing() const {
    std::string out;
    for (std::size_t i = 0; i < alive_.size(); ++i)
      if (alive_[i] && !got_[i])
        out += (out.empty() ? "" : ", ") + c_.trainer_names[i];
    return out;
  }

  std::size_t trainer_index(const caf::strong_actor_ptr& who) const {
    for (std::size_t i = 0; i < c_.trainers.size(); ++i)
      if (caf::actor_cast<caf::strong_actor_ptr>(c_.trainers[i]) == who)
        return i;
    return c_.trainers.size();
  }

  template <class Handles>
  static std::size_t index_of(const Handles& hs, const caf::actor_addr& a) {
    for (std::size_t i = 0; i < hs.size(); ++i)
      if (hs[i].address() == a)
        return i;
    return hs.size();
  }

  void on_down(const caf::down_msg& dm) {
    const auto why = self_->system().render(dm.reason);
    if (auto i = index_of(c_.shards, dm.source); i < c_.shards.size()) {
      if (recovery.enabled())
        failure = recovery.recover(i, why, alive_);
      else
        failure = c_.shard_names[i] + " is down (" + why + ")";
      return;
    }
    if (auto i = index_of(c_.dense, dm.source); i < c_.dense.size()) {
      failure = c_.dense_names[i] + " is down (" + why + ")";
      return;
    }
    if (auto i = index_of(c_.trainers, dm.source); i < c_.trainers.size()) {
      lose_trainer(i, why);
      return;
    }
    for (const auto& n : c_.nodes)
      if (n.agent == dm.source) {
        if (n.essential) {
          failure = n.name + " is down (" + why + ")";
          return;
        }
        for (auto t : n.trainers)
          lose_trainer(t, n.name + " down: " + why);
        return;
      }
  }

  void lose_trainer(std::size_t i, const std::string& why) {
    if (!alive_[i])
      return;
    if (!opts_.tolerate_trainer_loss) {
      failure = c_.trainer_names[i] + " is down (" + why + ")";
      return;
    }
    if (stopping) {
      failure = c_.trainer_names[i] + " went down during the coordinated stop (" + why + ")";
      return;
    }
    alive_[i] = false;
    const double at = std::chrono::duration<double>(self_->clock().now() - t0_).count();
    char when[32];
    std::snprintf(when, sizeof when, "%.1f", at);
    lost.push_back(c_.trainer_names[i] + " lost after " + when + " s (" + why + ")");
    spdlog::warn("{}: removed from the job; {} trainer(s) left", lost.back(), survivors());
    if (survivors() == 0) {
      failure = "every trainer was lost";
      return;
    }
    reform_ring();
  }

  std::size_t survivors() const {
    std::size_t n = 0;
    for (bool a : alive_)
      n += a;
    return n;
  }

  void reform_ring() {
    if (!model::uses_ring(cfg_.sync.algorithm) || syncers_.empty())
      return; // EASGD: the dense shards simply lose a client
    ++generation_;
    std::vector<caf::strong_actor_ptr> live;
    for (std::size_t i = 0; i < alive_.size(); ++i)
      if (alive_[i])
        live.push_back(syncers_[i]);
    for (std::size_t r = 0; r < live.size(); ++r)
      self_->send(caf::actor_cast<syncer_actor>(live[r]), peers_atom::value, generation_,
                  std::uint32_t(r), live);
    spdlog::warn("ring re-formed with {} syncer(s) (generation {})", live.size(), generation_);
  }

  caf::blocking_actor* self_;
  const train_config& cfg_;
  const cluster_handles& c_;
  const coordinator_options& opts_;
  std::vector<bool> got_;
  std::vector<caf::strong_actor_ptr> syncers_;
  std::uint32_t generation_ = 0;
  clock_type::time_point t0_{};
};

} // namespace

void name_roles(cluster_handles& c) {
  c.shard_names.clear();
  c.dense_names.clear();
  c.trainer_names.clear();
  for (std::size_t i = 0; i < c.shards.size(); ++i)
    c.shard_names.push_back("embedding shard " + std::to_string(i));
  for (std::size_t i = 0; i < c.dense.size(); ++i)
    c.dense_names.push_back("dense shard " + std::to_string(i));
  for (std::size_t i = 0; i < c.trainers.size(); ++i)
    c.trainer_names.push_back("trainer " + std::to_string(i));
}

std::optional<std::string> coordinate(caf::blocking_actor* self, const train_config& cfg,
                                      const model::dlrm& net, const cluster_handles& c,
                                      const coordinator_options& opts, progress_reporter& progress,
                                      run_metrics& out, coordination_result& res) {
  coordinator_run run{self, cfg, c, opts};
  run.monitor_all();
  const auto timeout = cfg.cluster.timeout;
  // 1. The ring.
  std::vector<caf::strong_actor_ptr> syncers;
  run.ask_all(syncers, timeout, {}, peers_atom::value);
  if (run.failure)
    return run.failure;
  run.wire_ring(syncers);
  res.syncers = syncers;
  // 2. Training.
  const auto t0 = self->clock().now();
  run.recovery.start();
  // Progress is best effort: a short timeout, so a frozen trainer (multi-node:
  // until the heartbeats declare its node down) does not stall the loop.
  const auto poll_timeout = std::min(timeout, std::chrono::milliseconds(1000));
  const bool virtual_time = actors::virtual_clock(self->system());
  auto since_start = [&] { return std::chrono::duration<double>(self->clock().now() - t0).count(); };
  auto poll = [&] {
    progress_report total;
    for (std::size_t i = 0; i < c.trainers.size(); ++i)
      if (run.alive_[i])
        self->request(c.trainers[i], poll_timeout, stats_atom::value)
          .receive([&](progress_report& p) { add_progress(total, p); }, [](caf::error&) {});
    auto sample = progress_of(total);
    if (virtual_time)
      sample.virtual_seconds = since_start();
    progress.update(sample);
    run.recovery.sample(total.examples);
    if (opts.on_progress && !run.failure)
      if (auto e = opts.on_progress(total.examples))
        run.failure = e;
  };
  std::vector<worker_stats> done;
  run.ask_all(done, std::chrono::hours(24 * 365), poll, start_atom::value);
  if (run.failure)
    return run.failure;
  const double seconds = since_start();
  // 3. Coordinated stop: every ring member finishes the same last round.
  run.stopping = true;
  std::vector<std::uint64_t> rounds;
  run.ask_all(rounds, timeout, {}, sync_atom::value);
  if (run.failure)
    return run.failure;
  std::uint64_t last = 0;
  if (model::uses_ring(cfg.sync.algorithm))
    for (std::size_t i = 0; i < rounds.size(); ++i)
      if (run.alive_[i])
        last = std::max(last, rounds[i] + 1);
  std::vector<trainer_report> reports;
  run.ask_all(reports, timeout, {}, stop_atom::value, last);
  if (run.failure)
    return run.failure;
  // A report crosses the wire in multi-node mode: its replica is checked
  // here, before evaluation and averaging read it.
  const std::size_t params = net.layout().size();
  res.reports.clear();
  for (std::size_t i = 0; i < reports.size(); ++i)
    if (run.alive_[i]) {
      if (reports[i].replica.size() != params)
        return c.trainer_names[i] + " reported a dense replica of " +
               std::to_string(reports[i].replica.size()) + " floats, the model has " +
               std::to_string(params);
      res.reports.push_back(std::move(reports[i]));
    }
  // 4. Metrics and evaluation.
  aggregate_reports(res.reports, seconds, out);
  out.trainers = cfg.cluster.trainers;
  out.workers_per_trainer = cfg.cluster.workers;
  out.sync.algorithm = model::to_string(cfg.sync.algorithm);
  out.flops_per_example = net.flops_per_example();
  out.lost_trainers = run.lost;
  if (run.recovery.enabled())
    run.recovery.report(out);
  auto final_progress = final_sample(out);
  if (virtual_time)
    final_progress.virtual_seconds = seconds;
  progress.finish(final_progress);
  if (out.examples == 0)
    return empty_set_error("training", cfg.data.train, out.malformed_lines);
  if (cfg.data.eval.empty())
    return std::nullopt;
  return evaluate_cluster(self, cfg, net, c, res, out);
}

} // namespace runtime
