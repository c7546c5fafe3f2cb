// The simulated cluster: every role as actors of one actor system. Builds the
// cluster (cluster_build.cpp: shards first, then trainers), runs the
// coordinator's protocol (coordinator.cpp) and stops every actor.
#include "cluster/cluster.hpp"
#include "cluster/cluster_build.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "messages/registry.hpp"
#include "cluster/cluster_metrics.hpp"
#include "cluster/cluster_cut.hpp"
#include "actors/sim_host.hpp"
#include "cluster/cluster_plan.hpp"
#include "cluster/coordinator.hpp"
#include "cluster/scheduler_setup.hpp"
#include "engine/stop_signal.hpp"
#include "cluster/fault_injector.hpp"
#include "cluster/full_recovery.hpp"
#include "sim/virtual_coordinator.hpp"
#include "sim/wall_transport.hpp"

namespace runtime {

namespace {

// The cuts and the shards' CPR saves (already in out.recovery) into
// out.checkpoint, when there were any.
void report_checkpoints(const train_config& cfg, const cut_totals& t, run_metrics& out) {
  checkpoint_metrics m{};
  m.cuts = t.cuts;
  m.bytes = t.bytes;
  m.seconds = t.seconds;
  m.max_pause_seconds = t.max_pause;
  m.pushes_held = t.pushes_held;
  m.rows_copied = t.rows_copied;
  double overhead = out.seconds > 0 ? t.seconds / out.seconds : 0.0;
  if (cfg.recovery.partial && out.recovery) {
    const auto& r = *out.recovery;
    m.shard_saves = r.saves;
    m.bytes += r.bytes;
    m.seconds += r.save_seconds;
    const double shard_seconds = out.seconds * double(cfg.cluster.embedding_shards);
    if (shard_seconds > 0)
      overhead += r.save_seconds / shard_seconds;
  }
  m.count = m.cuts + m.shard_saves;
  m.overhead_fraction = overhead;
  if (m.count > 0)
    out.checkpoint = m;
}

} // namespace

std::optional<std::string> run_simulated(const train_config& run_cfg,
                                         progress_reporter& progress, run_metrics& out) {
  train_config cfg = run_cfg;
  if (auto e = check_faults(cfg.sim.faults, cfg))
    return e;
  if (cfg.recovery.full && !cfg.checkpoint.resume.empty())
    return "option 'recovery.mode' = full: resuming (checkpoint.resume) with full recovery is "
           "not built yet (a rollback would count the resumed run's examples twice); "
           "recovery.mode=partial resumes";
  model::dlrm net(cfg.arch);
  std::optional<cluster_start> start;
  if (!cfg.checkpoint.resume.empty()) {
    start.emplace();
    if (auto e = load_cluster_start(cfg, net, *start))
      return "cannot resume: " + *e;
  }
  resume_base base;
  if (start) {
    base.examples = start->examples;
    base.counters = start->counters;
    base.readers = start->readers;
  }
  // Every role's configuration, derived once; the shards take the resumed
  // rows with them.
  auto roles = configure_roles(cfg, net, start ? &*start : nullptr, role_choice::all(cfg));
  start.reset();
  actors::cluster_system_config sys_cfg;
  messages::register_messages(sys_cfg);
  // The network between the simulated hosts: the transport of either clock
  // asks it for every message between two hosts.
  std::unique_ptr<network_model> network;
  if (cfg.net.enabled)
    network = std::make_unique<network_model>(
      roles.place.hosts(),
      network_model::settings{cfg.net.latency_us, cfg.net.bandwidth_gbps,
                              cfg.sim.virtual_clock ? 1.0 : effective_dilation(cfg)});
  std::unique_ptr<virtual_engine> engine;
  std::unique_ptr<wall_transport> transport;
  if (cfg.sim.virtual_clock) {
    auto s = cfg.sim.engine;
    s.seed = cfg.train.seed;
    s.stealing = cfg.cluster.scheduler == scheduler_policy::stealing;
    s.max_throughput = cfg.cluster.max_throughput;
    if (s.cores_per_host == 0)
      s.cores_per_host = cfg.cluster.workers + 1;
    engine = std::make_unique<virtual_engine>(s);
    engine->set_network(network.get());
    sys_cfg.set("scheduler.policy", caf::atom("testing"));
    sys_cfg.fabric = engine.get();
  } else {
    if (network || asks_for(cfg, fault_event::action::freeze)) {
      transport = std::make_unique<wall_transport>(network.get(), roles.place.hosts());
      sys_cfg.fabric = transport.get();
    }
    configure_wall_scheduler(sys_cfg, cfg, hardware_cores());
  }
  caf::actor_system sys{sys_cfg};
  if (engine)
    engine->attach(sys);
  cluster_handles c;
  auto cpr = std::make_shared<actors::cpr_counters>();
  if (cfg.recovery.partial) { // the saves of an earlier run are not this run's
    std::error_code ec;
    std::filesystem::remove_all(cfg.checkpoint.dir + "/cpr", ec);
  }
  build_cluster(sys, std::move(roles), cpr, c);
  // The coordinator: a scoped actor, or under the virtual clock one that
  // waits by running the engine.
  std::optional<caf::scoped_actor> scoped;
  std::optional<virtual_coordinator> virtual_self;
  caf::blocking_actor* self = nullptr;
  if (engine) {
    virtual_self.emplace(sys, *engine);
    self = virtual_self->self();
  } else {
    scoped.emplace(sys);
    self = scoped->ptr();
  }
  coordination_result res;
  cluster_checkpointer checkpoints{sys, cfg, c, base};
  fault_injector faults{cfg, c, self, {engine.get(), transport.get(), network.get()}};
  full_recovery rollbacks{self, cfg, engine.get()};
  coordinator_options opts;
  opts.tolerate_trainer_loss = kills_trainers(cfg);
  opts.on_started = [&](caf::actor_clock::time_point t0) { faults.start(t0); };
  opts.rollback_on_shard_loss = cfg.recovery.full;
  std::size_t kills_seen = 0; // by the attempts before this one
  opts.on_trained = [&] {
    faults.disarm();
    const auto& k = faults.killed();
    return std::vector<caf::actor_addr>(k.begin() + std::ptrdiff_t(kills_seen), k.end());
  };
  if (engine) // polls cost no virtual time: fraction kills land within 10 ms
    opts.poll_interval = std::chrono::milliseconds(10);
  opts.poll_in_cuts = !engine;
  if (cfg.recovery.partial)
    opts.restart_shard = [&](std::size_t i, std::uint64_t cut) -> std::optional<std::string> {
      place_shard(sys, cfg, cpr, c, i, cut);
      return std::nullopt;
    };
  // The progress poll asks for the cuts; the coordinator actor takes them
  // (cluster/cut_run.hpp) and reports each one's end to on_cut.
  opts.checkpoints = &checkpoints;
  std::optional<std::uint64_t> cut_at; // examples at the poll that asked for the cut in flight
  std::optional<std::uint64_t> stop_at; // a stop by signal: its cut of this point is in flight
  std::uint64_t cuts_before_stop = 0;
  auto stopped = [&](std::uint64_t examples) {
    return stopped_text(*out.stopped_by, examples,
                        cfg.checkpoint.enabled() ? &checkpoints : nullptr, cuts_before_stop);
  };
  opts.on_progress = [&](std::uint64_t examples) -> progress_step {
    if (const int sig = stop_requested()) { // SIGINT/SIGTERM: a cut of this point, then stop
      faults.disarm();
      out.stopped_by = signal_name(sig);
      if (!cfg.checkpoint.enabled())
        return {stopped(examples), false};
      stop_at = examples;
      cuts_before_stop = checkpoints.totals().cuts;
      return {std::nullopt, true};
    }
    faults.poll(examples);
    if (!cfg.checkpoint.enabled())
      return {};
    if (checkpoints.due(examples)) {
      faults.hold(); // a failure inside a cut waits for its end (full_recovery.hpp)
      cut_at = examples;
      return {std::nullopt, true};
    }
    if (const auto t = young_daly(cfg, checkpoints.totals()))
      checkpoints.set_every_seconds(*t);
    return {};
  };
  opts.on_cut = [&](const std::optional<std::string>& e) -> std::optional<std::string> {
    if (stop_at)
      return e ? *e : stopped(*stop_at);
    faults.release();
    if (cut_at)
      checkpoints.cut_ended(*cut_at);
    cut_at.reset();
    if (const auto t = young_daly(cfg, checkpoints.totals()))
      checkpoints.set_every_seconds(*t);
    return e;
  };
  std::optional<std::string> failure;
  for (;;) { // one attempt, and one more after each rollback (recovery.mode=full)
    rollbacks.attempt_began();
    failure = coordinate(self, cfg, net, c, opts, progress, out, res);
    if (failure || !res.rollback)
      break;
    if (faults.kills() == kills_seen) { // only injected failures are rolled back
      failure = res.rollback->why + " (no fault was injected since the last rollback)";
      break;
    }
    kills_seen = faults.kills();
    faults.hold(); // failures during the rollback fall on the new cluster
    failure = rollbacks.roll_back(*res.rollback, c, net, checkpoints.newest(), start, base);
    if (failure)
      break;
    c = cluster_handles{};
    res = coordination_result{};
    build_cluster(sys, configure_roles(cfg, net, start ? &*start : nullptr, role_choice::all(cfg)),
                  cpr, c);
    start.reset(); // the shards hold their rows now
    checkpoints.restart(base);
    faults.release();
  }
  faults.disarm();
  out.faults = faults.done();
  if (cfg.recovery.partial)
    report_recovery(cfg, *cpr, out);
  if (!failure && base.examples > 0) { // train NE over the whole training, as sequential
    const auto k = counters_after(base, res, out);
    model::ne_accumulator ne;
    ne.add_batch(k.loss_sum, k.prob_sum, base.examples + out.examples, k.positives);
    out.train_ne = ne.ne();
  }
  if (!failure && cfg.checkpoint.enabled()) // one more at the end
    failure = export_cluster_model(self, cfg, c, res, out, cfg.checkpoint.dir,
                                   cfg.checkpoint.keep, base,
                                   export_options{"simulated", false, &checkpoints});
  if (!failure && !cfg.checkpoint.model_out.empty())
    failure = export_cluster_model(self, cfg, c, res, out, cfg.checkpoint.model_out, 1, base);
  if (cfg.recovery.full)
    rollbacks.report(out, base, checkpoints.totals());
  report_checkpoints(cfg, checkpoints.totals(), out);
  const auto virtual_end = engine ? engine->elapsed() : virtual_engine::duration{};
  if (!failure && network) {
    const auto& n = network->config();
    out.net = net_metrics{n.latency_us, n.bandwidth_gbps, n.dilation, network->bytes_moved(),
                          network->messages_moved(), network->tx_busy_seconds(),
                          network->rx_busy_seconds(),
                          engine ? std::chrono::duration<double>(virtual_end).count()
                                 : out.seconds * n.dilation};
    if (!engine) // (thread CPU time: the virtual clock has its own, exact time)
      out.host_examples_per_second =
        host_examples_per_second(res.reports, cfg.cluster.workers, n.dilation);
  }
  if (out.workers && !engine)
    out.workers->scheduler_threads = sys.scheduler().num_workers();
  if (auto e = stop_cluster(self, c, cfg.cluster.timeout))
    spdlog::warn("stopping the cluster: {}", *e);
  if (engine) { // what is left to run (timers), or the system waits forever
    out.workers.reset(); // (thread CPU time: not the same in two runs of one command)
    engine->run();
    auto& sim = out.sim.emplace();
    sim.virtual_seconds = std::chrono::duration<double>(virtual_end).count();
    sim.handlers = engine->stats().handlers;
    sim.busy_core_seconds = engine->stats().busy_seconds;
    sim.host_busy_seconds = engine->host_busy();
    sim.cores_per_host = engine->cores_per_host();
    sim.busy_by_role = engine->stats().by_role;
    sim.measured = engine->measured_costs();
  }
  return failure;
}

} // namespace runtime
