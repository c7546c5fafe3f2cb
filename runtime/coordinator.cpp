// The coordinator's protocol (see coordinator.hpp):
//   coordinator -> trainer: peers (its syncer), start, stats, sync, stop(last)
//   coordinator -> syncer: peers(rank, all) / peers(generation, rank, survivors)
//   coordinator -> shards: dump (evaluation)
#include "runtime/coordinator.hpp"
#include "runtime/coordinator_run.hpp"

#include <chrono>
#include <functional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/sim_host.hpp"
#include "runtime/cluster_metrics.hpp"
#include "runtime/input.hpp"
#include "runtime/timeline.hpp"

namespace runtime {

using namespace actors;

std::optional<std::string> coordinate(caf::blocking_actor* self, const train_config& cfg,
                                      const model::dlrm& net, const cluster_handles& c,
                                      const coordinator_options& opts, progress_reporter& progress,
                                      run_metrics& out, coordination_result& res) {
  coordinator_run run{self, cfg, c, opts};
  run.monitor_all();
  const auto timeout = cfg.cluster.timeout;
  // Progress is best effort: a short timeout, so a frozen trainer (multi-node:
  // until the heartbeats declare its node down) does not stall the loop.
  const auto poll_timeout = std::min(timeout, std::chrono::milliseconds(1000));
  // The protocol ended early: an error, or a loss for a rollback (then the
  // DOWNs already in are handled first: the lost shard names it).
  auto end_early = [&]() -> std::optional<std::string> {
    if (run.failure() || !run.rollback)
      return run.failure();
    run.take_downs();
    res.rollback = std::move(run.rollback);
    return std::nullopt;
  };
  // 1. The ring.
  std::vector<caf::strong_actor_ptr> syncers;
  run.ask_all(coordinator_phase::wire, syncers, timeout, {}, peers_atom::value);
  if (run.ended())
    return end_early();
  run.wire_ring(syncers);
  res.syncers = syncers;
  const bool virtual_time = actors::virtual_clock(self->system());
  // Training time starts once every embedding shard has its tables, as
  // the sequential engine's does after its own: on the virtual clock too,
  // where sim.cost=measured charges the shards' initialisation.
  run.enter(coordinator_phase::shards);
  run.await_shards(timeout);
  if (run.ended())
    return end_early();
  // 2. Training.
  const auto t0 = self->clock().now();
  run.recovery.start(t0);
  if (opts.on_started)
    opts.on_started(t0);
  auto since_start = [&] { return std::chrono::duration<double>(self->clock().now() - t0).count(); };
  auto poll = [&] {
    progress_report total;
    for (std::size_t i = 0; i < c.trainers.size(); ++i)
      if (run.alive()[i])
        self->request(c.trainers[i], poll_timeout, stats_atom::value)
          .receive([&](progress_report& p) { add_progress(total, p); }, [](caf::error&) {});
    auto sample = progress_of(total);
    if (virtual_time)
      sample.virtual_seconds = since_start();
    progress.update(sample);
    run.recovery.sample(total.examples);
    run.last_examples = total.examples;
    if (opts.on_progress && !run.ended())
      if (auto e = opts.on_progress(total.examples)) {
        if (opts.rollback_on_shard_loss) { // a cut that failed with the loss
          run.take_downs();
          if (!run.rollback)
            run.note_loss(*e, std::nullopt);
        } else {
          run.phases.fail(std::move(*e));
        }
      }
  };
  std::vector<worker_stats> done;
  run.ask_all(coordinator_phase::train, done, std::chrono::hours(24 * 365), poll,
              start_atom::value);
  if (run.ended())
    return end_early();
  const double seconds = since_start();
  run.enter(coordinator_phase::drain);
  if (opts.on_trained) {
    run.await_downs(opts.on_trained(), timeout);
    if (run.ended())
      return end_early();
  }
  // 3. Coordinated stop: every ring member finishes the same last round.
  std::vector<std::uint64_t> rounds;
  run.ask_all(coordinator_phase::rounds, rounds, timeout, {}, sync_atom::value);
  if (run.ended())
    return end_early();
  const std::uint64_t last = run.phases.last_round(rounds);
  std::vector<trainer_report> reports;
  run.ask_all(coordinator_phase::stop, reports, timeout, {}, stop_atom::value, last);
  if (run.ended())
    return end_early();
  // A report crosses the wire in multi-node mode: its replica is checked
  // here, before evaluation and averaging read it.
  run.enter(coordinator_phase::report);
  const std::size_t params = net.layout().size();
  res.reports.clear();
  for (std::size_t i = 0; i < reports.size(); ++i)
    if (run.alive()[i]) {
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
  out.lost_trainers = run.phases.lost();
  out.dct_mp = dct_mp_from(res.reports, cfg.arch.dim, out);
  if (out.dct_mp) {
    out.dct_mp->keep = cfg.dct.mp_keep;
    out.dct_mp->backward = cfg.dct.mp_straight ? "straight" : "mask";
    out.dct_mp->grad_keep = cfg.dct.mp_straight ? cfg.dct.mp_grad_keep : 0.0;
    out.dct_mp->error_feedback = cfg.dct.mp_straight && cfg.dct.error_feedback;
    out.dct_mp->refresh = cfg.dct.refresh;
  }
  if (out.dct) {
    out.dct->ring = model::uses_ring(cfg.sync.algorithm);
    out.dct->dp_keep = cfg.dct.dp_keep;
    out.dct->refresh = cfg.dct.refresh;
    out.dct->error_feedback = cfg.dct.error_feedback;
  }
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
