// The coordinator's protocol (see coordinator.hpp):
//   coordinator -> trainer: peers (its syncer), start, stats, sync, stop(last)
//   coordinator -> syncer: peers(rank, all) / peers(generation, rank, survivors)
//   coordinator -> shards: dump (evaluation)
#include "cluster/coordinator.hpp"
#include "cluster/coordinator_actor.hpp"

#include <chrono>
#include <functional>
#include <tuple>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "sim/virtual_time.hpp"
#include "cluster/cluster_metrics.hpp"
#include "engine/input.hpp"
#include "report/timeline.hpp"

namespace runtime {

using namespace actors;

std::optional<std::string> coordinate(caf::blocking_actor* self, const train_config& cfg,
                                      const model::dlrm& net, const cluster_handles& c,
                                      const coordinator_options& opts, progress_reporter& progress,
                                      run_metrics& out, coordination_result& res) {
  // Steps 1-3: the coordinator actor; this caller serves its hooks.
  coordinator_setup setup;
  setup.cfg = &cfg;
  setup.cluster = &c;
  setup.caller = caf::actor_cast<caf::actor>(self);
  setup.tolerate_trainer_loss = opts.tolerate_trainer_loss;
  setup.restart_shards = static_cast<bool>(opts.restart_shard);
  setup.rollback_on_shard_loss = opts.rollback_on_shard_loss;
  setup.on_trained = static_cast<bool>(opts.on_trained);
  setup.poll_interval = opts.poll_interval;
  setup.poll_in_cuts = opts.poll_in_cuts;
  setup.checkpoints = opts.checkpoints;
  auto coordinator = spawn_coordinator(self->system(), setup);
  self->monitor(coordinator);
  self->send(coordinator, messages::begin_atom::value);
  const bool virtual_time = virtual_clock(self->system());
  // The timeline's per-host busy share: core seconds since training started.
  const virtual_engine* engine = virtual_engine_of(self->system());
  std::vector<double> busy_at_start;
  auto add_host_busy = [&](progress_sample& s) {
    if (!engine)
      return;
    s.cores_per_host = engine->cores_per_host();
    s.host_busy_seconds = engine->host_busy();
    for (std::size_t h = 0; h < s.host_busy_seconds.size() && h < busy_at_start.size(); ++h)
      s.host_busy_seconds[h] -= busy_at_start[h];
  };
  // The progress line's share done: data read of all passes over the
  // files' bytes (0: unknown, compressed or stdin), or examples over
  // train.max-examples, whichever is further.
  const double bytes_to_read =
    double(total_bytes(cfg.data.train)) * double(std::max<std::size_t>(1, cfg.train.epochs));
  auto share_done = [&](const progress_report& total) {
    double f = bytes_to_read > 0 ? double(total.read_bytes) / bytes_to_read : -1.0;
    if (cfg.train.max_examples > 0)
      f = std::max(f, double(total.examples) / double(cfg.train.max_examples));
    return f < 0 ? f : std::min(1.0, f);
  };
  shard_recovery recovery{self, c, opts.restart_shard};
  caf::actor_clock::time_point t0{};
  std::optional<coordinator_outcome> outcome;
  self->receive_while([&] { return !outcome; })(
    [&](messages::started_atom, std::int64_t t0_ns, std::vector<caf::strong_actor_ptr>& syncers) {
      t0 = caf::actor_clock::time_point{std::chrono::nanoseconds(t0_ns)};
      if (engine)
        busy_at_start = engine->host_busy();
      res.syncers = std::move(syncers); // (the cuts hold them)
      recovery.start(t0);
      if (opts.on_started)
        opts.on_started(t0);
    },
    [&](messages::polled_atom, progress_report& total) -> std::tuple<std::string, bool> {
      auto sample = progress_of(total);
      sample.fraction_done = share_done(total);
      if (virtual_time)
        sample.virtual_seconds = std::chrono::duration<double>(self->clock().now() - t0).count();
      add_host_busy(sample);
      progress.update(sample);
      recovery.sample(total.examples);
      if (!opts.on_progress)
        return {std::string{}, false};
      auto step = opts.on_progress(total.examples);
      if (step.error)
        return {*step.error, false};
      return {std::string{}, step.cut && opts.checkpoints};
    },
    [&](messages::cut_atom, std::string& failure) -> std::string {
      std::optional<std::string> f;
      if (!failure.empty())
        f = std::move(failure);
      auto e = opts.on_cut ? opts.on_cut(f) : f;
      return e ? *e : std::string{};
    },
    [&](messages::trained_atom) {
      return opts.on_trained ? opts.on_trained() : std::vector<caf::actor_addr>{};
    },
    [&](messages::restart_atom, std::uint64_t shard, std::string& why,
        std::uint64_t cut) -> std::string {
      auto e = recovery.place(std::size_t(shard), why, cut);
      return e ? *e : std::string{};
    },
    [&](messages::restarted_atom, std::uint64_t shard, shard_restart& r) {
      recovery.restarted(std::size_t(shard), r);
    },
    [&](coordinator_outcome& o) { outcome = std::move(o); },
    [&](caf::down_msg& dm) {
      if (dm.source == coordinator.address()) {
        outcome = coordinator_outcome{};
        outcome->failure =
          "the coordinator actor stopped before its outcome: " + self->system().render(dm.reason);
      }
    });
  self->demonitor(coordinator.address());
  auto& o = *outcome;
  if (o.failure)
    return o.failure;
  if (o.rollback) {
    res.rollback = std::move(o.rollback);
    return std::nullopt;
  }
  const double seconds = o.seconds;
  // A report crosses the wire in multi-node mode: its replica is checked
  // here, before evaluation and averaging read it.
  const std::size_t params = net.layout().size();
  res.reports.clear();
  for (std::size_t i = 0; i < o.reports.size(); ++i)
    if (o.alive[i]) {
      if (o.reports[i].replica.size() != params)
        return c.trainer_names[i] + " reported a dense replica of " +
               std::to_string(o.reports[i].replica.size()) + " floats, the model has " +
               std::to_string(params);
      res.reports.push_back(std::move(o.reports[i]));
    }
  // 4. Metrics and evaluation.
  aggregate_reports(res.reports, seconds, out);
  out.trainers = cfg.cluster.trainers;
  out.workers_per_trainer = cfg.cluster.workers;
  out.sync.algorithm = model::to_string(cfg.sync.algorithm);
  out.flops_per_example = net.flops_per_example();
  out.lost_trainers = o.lost;
  out.dct_mp = dct_mp_from(res.reports, cfg.arch.dim, out, cfg.embedding.dynamic ? 2 : 1);
  if (out.dct_mp) {
    out.dct_mp->keep = cfg.dct.mp_keep;
    out.dct_mp->backward = cfg.dct.mp_straight ? "straight" : "mask";
    out.dct_mp->grad_keep = cfg.dct.mp_straight ? cfg.dct.mp_grad_keep : 0.0;
    out.dct_mp->error_feedback = cfg.dct.mp_straight && cfg.dct.error_feedback;
    out.dct_mp->refresh = cfg.dct.mp_refresh;
  }
  if (out.dct) {
    out.dct->ring = model::uses_ring(cfg.sync.algorithm);
    out.dct->ring_reduce = out.dct->ring && cfg.dct.dp_ring_reduce;
    out.dct->dp_keep = out.dct->ring_reduce ? cfg.dct.reduce_keep() : cfg.dct.dp_keep;
    out.dct->refresh = cfg.dct.refresh;
    out.dct->error_feedback = cfg.dct.error_feedback;
  }
  if (recovery.enabled())
    recovery.report(out);
  auto final_progress = final_sample(out);
  for (const auto& r : res.reports) // (/metrics: each trainer's own final counters)
    final_progress.trainers.push_back({std::uint32_t(r.trainer), r.work.examples, r.sync.rounds});
  if (virtual_time)
    final_progress.virtual_seconds = seconds;
  add_host_busy(final_progress);
  progress.finish(final_progress);
  if (out.examples == 0)
    return empty_set_error("training", cfg.data.train, out.malformed_lines);
  if (cfg.embedding.dynamic)
    if (auto e = gather_dynamic_metrics(self, cfg, c, out))
      return e;
  if (cfg.data.eval.empty())
    return std::nullopt;
  return evaluate_cluster(self, cfg, net, c, res, out);
}

} // namespace runtime
