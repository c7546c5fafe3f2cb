// The coordinator node: admission, plan, the coordinator protocol, shutdown
// (waiting on the roster and a lost shard's node: node_roster.cpp).
//   coordinator agent -> coordinator main: roster (every change; the main
//     waits on these until every node is ready)
//   coordinator main -> every agent: spawn, end
//   recovery.mode=partial, a shard's node lost: roster (wait until a new
//   process of it is ready) -> its agent: spawn(the shard) -> shard: recover
//   output.model, after training: coordinator main -> each embedding shard:
//   save(offset) -> its file's pieces (cluster/shard_fetch.hpp)
//   checkpoint.every-*, while training: the coordinator actor's cuts; a
//   thread of the cut -> each embedding shard: cut(N, offset) -> the pieces
//   of the file it kept at cut N (cluster/cut_run.hpp)
#include <algorithm>
#include <chrono>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/cluster_cut.hpp"
#include "cluster/cluster_plan.hpp"
#include "cluster/coordinator.hpp"
#include "cluster/full_recovery.hpp"
#include "deploy/node.hpp"
#include "deploy/node_roster.hpp"
#include "deploy/node_spawn.hpp"
#include "engine/stop_signal.hpp"
#include "model/metrics.hpp"

namespace runtime {

using namespace messages;
using clock_type = std::chrono::steady_clock;

std::optional<std::string> run_coordinator(caf::actor_system& sys, const node_context& ctx,
                                           const node_agent_actor& agent,
                                           caf::scoped_actor& roster_inbox,
                                           progress_reporter& progress, run_metrics& out) {
  const auto& d = ctx.deploy;
  const auto& cfg = ctx.cfg;
  caf::scoped_actor self{sys};
  node_roster roster;
  std::vector<node_agent_actor> agents;
  // Ends the other nodes first and waits (up to 5 s) until their agents are
  // gone, so they see `end` rather than this process going away; then its own.
  auto end_all = [&] {
    std::size_t others = 0;
    for (auto& a : agents)
      if (a != agent) {
        self->monitor(a);
        self->send(a, end_atom::value);
        ++others;
      }
    // One wait for the DOWNs, bounded by the deadline (no periodic wake-up).
    const auto until = clock_type::now() + std::chrono::seconds(5);
    std::size_t downs = 0;
    bool late = false;
    while (downs < others && !late) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
        std::max(until - clock_type::now(), clock_type::duration::zero()));
      self->receive(
        [&](caf::down_msg& dm) {
          for (auto& a : agents)
            if (a != agent && dm.source == a.address())
              ++downs;
        },
        caf::after(left) >> [&] { late = true; });
    }
    self->send(agent, end_atom::value);
  };
  // checkpoint.resume: the examples and metrics of the runs before (each node
  // reads the roles' part of the checkpoint itself: node_plan.hpp).
  resume_base base_run;
  if (!cfg.checkpoint.resume.empty()) {
    checkpoint::opened_checkpoint saved;
    if (auto e = checkpoint::open_checkpoint(cfg.checkpoint.resume, saved))
      return "cannot resume: " + *e;
    base_run.examples = saved.m.examples;
    base_run.counters = saved.m.counters;
    std::uint64_t passes = 0;
    if (auto e = resume_readers(cfg, saved, base_run.readers, passes))
      return "cannot resume: " + *e;
  }
  roster_watch watch{roster_inbox};
  if (auto err = wait_for_nodes(watch, ctx, roster))
    return err;
  for (auto& a : roster.agents)
    agents.push_back(caf::actor_cast<node_agent_actor>(a));
  spdlog::info("all {} nodes ready; starting the roles", agents.size());
  cluster_handles c;
  std::vector<caf::node_id> trainer_nodes;
  auto err = spawn_cluster(self, ctx, agents, ctx.config_ini, c, trainer_nodes);
  if (!err) {
    model::dlrm net(cfg.arch);
    coordinator_options opts;
    opts.tolerate_trainer_loss = d.tolerate_trainer_loss;
    std::vector<caf::strong_actor_ptr> host(c.shards.size());
    for (std::size_t i = 0; i < agents.size(); ++i)
      for (auto e : d.embedding_shards_on(d.nodes[i].id))
        host[e] = caf::actor_cast<caf::strong_actor_ptr>(agents[i]);
    if (cfg.recovery.partial)
      opts.restart_shard = [&](std::size_t i, std::uint64_t) { // (multi-node: no cuts)
        return restart_remote_shard(self, ctx, watch, agents, host, c, i, trainer_nodes);
      };
    // checkpoint.every-*: cuts while training, as one process takes them,
    // written here with the shards' files fetched over the wire.
    std::optional<cluster_checkpointer> checkpoints;
    if (cfg.checkpoint.enabled()) {
      checkpoints.emplace(self->system(), cfg, c, base_run);
      checkpoints->fetch_shard_files("multi-node");
      opts.checkpoints = &*checkpoints;
    }
    std::optional<std::uint64_t> cut_at; // examples at the poll that asked for the cut
    // SIGINT/SIGTERM to the coordinator's process: at the next progress poll
    // a cut of that point (with checkpoint.dir), then the job stops.
    std::optional<std::uint64_t> stop_at;
    std::uint64_t cuts_before_stop = 0;
    auto stopped = [&](std::uint64_t examples) {
      return stopped_text(*out.stopped_by, examples, checkpoints ? &*checkpoints : nullptr,
                          cuts_before_stop);
    };
    opts.on_progress = [&](std::uint64_t examples) -> progress_step {
      if (const int sig = stop_requested()) {
        out.stopped_by = signal_name(sig);
        if (!checkpoints)
          return {stopped(examples), false};
        stop_at = examples;
        cuts_before_stop = checkpoints->totals().cuts;
        return {std::nullopt, true};
      }
      if (checkpoints && !cut_at && checkpoints->due(examples)) {
        cut_at = examples;
        return {std::nullopt, true};
      }
      if (const auto t = checkpoints ? young_daly(cfg, checkpoints->totals()) : std::nullopt)
        checkpoints->set_every_seconds(*t);
      return {};
    };
    opts.on_cut = [&](const std::optional<std::string>& e) -> std::optional<std::string> {
      if (stop_at)
        return e ? *e : stopped(*stop_at);
      if (cut_at)
        checkpoints->cut_ended(*cut_at);
      cut_at.reset();
      return e;
    };
    // recovery.mode=full: a lost embedding shard stops every role; once the
    // shard's node is back, every node starts its roles again from the
    // newest cut (each reads its part of it) and the job goes on from there.
    opts.rollback_on_shard_loss = cfg.recovery.full;
    opts.poll_in_cuts = true; // (a cut here takes seconds: fetched over the wire)
    full_recovery rollbacks{self.ptr(), cfg, nullptr};
    coordination_result res;
    for (;;) { // one attempt, and one more after each rollback
      rollbacks.attempt_began();
      err = coordinate(self.ptr(), cfg, net, c, opts, progress, out, res);
      if (err || !res.rollback)
        break;
      const auto lost = res.rollback->shard
                          ? std::optional<std::size_t>(node_of_shard(d, *res.rollback->shard))
                          : std::nullopt;
      const auto cut = checkpoints->newest();
      std::optional<cluster_start> start; // (only its counts: each node reads its part)
      err = rollbacks.roll_back(*res.rollback, c, net, cut, start, base_run, false);
      start.reset();
      const auto again = clock_type::now();
      std::string ini = ctx.config_ini;
      if (!err && !cut.empty())
        err = ini_resuming(ctx.config_ini, cut, ini);
      if (!err)
        err = await_nodes_back(self, ctx, watch, agents, lost);
      if (!err)
        err = spawn_cluster(self, ctx, agents, ini, c, trainer_nodes);
      if (err)
        break;
      rollbacks.restarted(std::chrono::duration<double>(clock_type::now() - again).count());
      res = coordination_result{};
      checkpoints->restart(base_run);
      cut_at.reset();
    }
    if (!err && cfg.recovery.partial) {
      report_recovery(cfg, actors::cpr_counters{}, out); // the settings
      out.recovery->saves_counted = false;
    }
    if (!err && base_run.examples > 0) { // train NE over the whole training, as one process
      const auto k = counters_after(base_run, res, out);
      model::ne_accumulator ne;
      ne.add_batch(k.loss_sum, k.prob_sum, base_run.examples + out.examples, k.positives);
      out.train_ne = ne.ne();
    }
    // output.model: the shards' files travel to this node in pieces and are
    // written here with the replicas, as one process writes them.
    if (!err && checkpoints) // one more at the end, as train writes it
      err = export_cluster_model(self.ptr(), cfg, c, res, out, cfg.checkpoint.dir,
                                 cfg.checkpoint.keep, base_run,
                                 export_options{"multi-node", true, &*checkpoints});
    if (!err && checkpoints)
      spdlog::info("checkpoints: {} cuts while training, {:.1f} MB, {:.2f} s; newest {}",
                   checkpoints->totals().cuts, double(checkpoints->totals().bytes) / 1e6,
                   checkpoints->totals().seconds, checkpoints->newest());
    if (!err && !cfg.checkpoint.model_out.empty())
      err = export_cluster_model(self.ptr(), cfg, c, res, out, cfg.checkpoint.model_out, 1,
                                 base_run, export_options{"multi-node", true});
    if (cfg.recovery.full)
      rollbacks.report(out, base_run, checkpoints->totals());
  }
  end_all();
  return err;
}

} // namespace runtime
