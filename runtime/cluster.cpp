// Coordinator of the simulated cluster.
//   coordinator -> trainer: start; trainer -> coordinator: worker_stats (done)
//   coordinator -> trainer: stats (progress), sync (rounds), stop(last_round)
//   trainer -> coordinator: trainer_report; coordinator -> shards: dump
#include "runtime/cluster.hpp"

#include <chrono>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/dense_shard.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/sim_network.hpp"
#include "actors/trainer.hpp"
#include "messages/registry.hpp"
#include "runtime/cluster_metrics.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/input.hpp"

namespace runtime {

namespace {

using namespace actors;
using clock_type = std::chrono::steady_clock;

struct cluster {
  std::vector<embedding_shard_actor> shards;
  std::vector<dense_shard_actor> dense;
  std::vector<model::range> dense_ranges;
  std::vector<trainer_actor> trainers;
  placement place;                   // trainers, then embedding shards, then dense shards
  std::shared_ptr<sim_network> net;  // network model; null = off
};

void build(caf::actor_system& sys, const train_config& cfg, const std::vector<float>& init,
           cluster& c) {
  const auto& cl = cfg.cluster;
  c.place = placement{cl.trainers, cl.embedding_shards, cl.dense_shards};
  if (cfg.net.enabled)
    c.net = std::make_shared<sim_network>(
      c.place.hosts(),
      sim_network::settings{cfg.net.latency_us, cfg.net.bandwidth_gbps, effective_dilation(cfg)});
  for (std::size_t s = 0; s < cl.embedding_shards; ++s) {
    embedding_shard_config ec;
    ec.shard = std::uint32_t(s);
    ec.num_shards = std::uint32_t(cl.embedding_shards);
    ec.num_tables = cfg.arch.num_tables;
    ec.rows_per_table = cfg.arch.rows_per_table;
    ec.dim = cfg.arch.dim;
    ec.optimizer = cfg.train.sparse;
    ec.seed = cfg.train.seed + 1 + s;
    c.shards.push_back(sys.spawn(embedding_shard, ec));
  }
  c.dense_ranges = model::split_range(init.size(), cl.dense_shards);
  if (model::is_easgd(cfg.sync.algorithm))
    for (std::size_t d = 0; d < cl.dense_shards; ++d) {
      dense_shard_config dc;
      dc.shard = std::uint32_t(d);
      dc.offset = c.dense_ranges[d].offset;
      dc.initial.assign(init.begin() + std::ptrdiff_t(c.dense_ranges[d].offset),
                        init.begin() + std::ptrdiff_t(c.dense_ranges[d].offset + c.dense_ranges[d].size));
      dc.alpha = cfg.sync.alpha;
      c.dense.push_back(sys.spawn(dense_shard, dc));
    }
  for (std::size_t t = 0; t < cl.trainers; ++t) {
    trainer_config tc;
    tc.trainer = std::uint32_t(t);
    tc.workers = cl.workers;
    tc.arch = cfg.arch;
    tc.dense_opt = cfg.train.dense;
    tc.initial_params = init;
    tc.reader.options = reader_options_for(cfg, cfg.data.train, t, cl.trainers);
    tc.reader.batch_size = cfg.train.batch_size;
    tc.reader.epochs = cfg.train.epochs;
    // An example cap is split evenly over the trainers' parts.
    tc.reader.max_examples = cfg.train.max_examples
                               ? (cfg.train.max_examples + t) / cl.trainers
                               : 0;
    tc.shards = c.shards;
    tc.net = c.net;
    tc.place = c.place;
    tc.timeout = cl.timeout;
    tc.sync_every = model::is_foreground(cfg.sync.algorithm) ? cfg.sync.k : 0;
    auto& sc = tc.syncer;
    sc.trainer = std::uint32_t(t);
    sc.num_trainers = std::uint32_t(cl.trainers);
    sc.algorithm = cfg.sync.algorithm;
    sc.merge = cfg.sync.merge;
    sc.bmuf = model::bmuf_params{cfg.sync.momentum, cfg.sync.block_lr, cfg.sync.nesterov};
    sc.min_pause = cfg.sync.min_pause;
    sc.min_gap_batches = cfg.sync.min_gap_batches;
    sc.timeout = cl.timeout;
    sc.dense_shards = c.dense;
    sc.dense_ranges = c.dense_ranges;
    sc.initial = init;
    c.trainers.push_back(sys.spawn(trainer, tc));
  }
}

std::string render(caf::actor_system& sys, const caf::error& err) { return sys.render(err); }

// Sends `msg` to every trainer and collects one reply per trainer, in trainer
// order. Replies arrive as ordinary messages (the trainers answer the sender).
template <class Reply, class... Ts>
std::optional<std::string> ask_all(caf::scoped_actor& self, const cluster& c,
                                   std::vector<Reply>& replies, std::chrono::milliseconds timeout,
                                   const std::function<void()>& on_idle, Ts... xs) {
  replies.assign(c.trainers.size(), Reply{});
  std::vector<bool> got(c.trainers.size(), false);
  for (auto& t : c.trainers)
    self->send(t, xs...);
  std::size_t pending = c.trainers.size();
  std::optional<std::string> failure;
  auto index_of = [&](const caf::strong_actor_ptr& who) -> std::size_t {
    for (std::size_t i = 0; i < c.trainers.size(); ++i)
      if (caf::actor_cast<caf::strong_actor_ptr>(c.trainers[i]) == who)
        return i;
    return c.trainers.size();
  };
  auto deadline = clock_type::now() + timeout;
  while (pending > 0 && !failure) {
    self->receive(
      [&](Reply& r) {
        auto i = index_of(self->current_sender());
        if (i < got.size() && !got[i]) {
          got[i] = true;
          replies[i] = std::move(r);
          --pending;
        }
      },
      [&](caf::error& err) { failure = render(self->system(), err); },
      [&](caf::down_msg& dm) {
        if (dm.reason)
          failure = "trainer terminated: " + render(self->system(), dm.reason);
      },
      caf::after(std::chrono::milliseconds(200)) >> [&] {
        if (on_idle)
          on_idle();
        if (clock_type::now() > deadline)
          failure = "no reply from " + std::to_string(pending) + " trainer(s) within " +
                    std::to_string(timeout.count()) + " ms";
      });
  }
  return failure;
}

} // namespace

std::optional<std::string> run_simulated(const train_config& cfg, progress_reporter& progress,
                                         run_metrics& out) {
  caf::actor_system_config sys_cfg;
  messages::register_messages(sys_cfg);
  if (cfg.cluster.scheduler_policy == "sharing")
    sys_cfg.set("scheduler.policy", caf::atom("sharing"));
  if (cfg.cluster.max_threads > 0)
    sys_cfg.set("scheduler.max-threads", cfg.cluster.max_threads);
  caf::actor_system sys{sys_cfg};
  model::dlrm net(cfg.arch);
  std::vector<float> init(net.layout().size());
  model::init_dense(net.layout(), init.data(), cfg.train.seed);
  cluster c;
  build(sys, cfg, init, c);
  caf::scoped_actor self{sys};
  for (auto& t : c.trainers)
    self->monitor(t);
  for (auto& s : c.shards)
    self->monitor(s);
  std::optional<std::string> failure;
  auto shutdown = [&] {
    for (auto& t : c.trainers)
      self->send_exit(t, caf::exit_reason::user_shutdown);
    for (auto& d : c.dense)
      self->send_exit(d, caf::exit_reason::user_shutdown);
    for (auto& s : c.shards)
      self->send_exit(s, caf::exit_reason::user_shutdown);
  };
  const auto long_wait = std::chrono::hours(24);
  // Wire the ring: each trainer names its syncer; every syncer gets all of them.
  std::vector<caf::strong_actor_ptr> syncers;
  failure = ask_all(self, c, syncers, cfg.cluster.timeout, {}, peers_atom::value);
  if (!failure && model::uses_ring(cfg.sync.algorithm))
    for (std::size_t i = 0; i < syncers.size(); ++i)
      self->send(caf::actor_cast<syncer_actor>(syncers[i]), peers_atom::value, std::uint32_t(i),
                 syncers);
  // Train: the start replies come when each trainer's data is exhausted.
  const auto t0 = clock_type::now();
  auto poll = [&] {
    progress_report total;
    for (auto& t : c.trainers)
      self->request(t, cfg.cluster.timeout, stats_atom::value)
        .receive([&](progress_report& p) { add_progress(total, p); }, [](caf::error&) {});
    progress_sample s = progress_of(total);
    progress.update(s);
  };
  std::vector<worker_stats> done;
  if (!failure)
    failure = ask_all(self, c, done, long_wait, poll, start_atom::value);
  const double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  // Coordinated stop: every ring member finishes the same last round.
  std::vector<std::uint64_t> rounds;
  if (!failure)
    failure = ask_all(self, c, rounds, cfg.cluster.timeout, {}, sync_atom::value);
  std::vector<trainer_report> reports;
  if (!failure) {
    std::uint64_t last = 0;
    for (auto r : rounds)
      last = std::max(last, r + 1);
    if (!model::uses_ring(cfg.sync.algorithm))
      last = 0;
    failure = ask_all(self, c, reports, cfg.cluster.timeout, {}, stop_atom::value, last);
  }
  if (failure) {
    shutdown();
    return failure;
  }
  aggregate_reports(reports, seconds, out);
  out.trainers = cfg.cluster.trainers;
  out.workers_per_trainer = cfg.cluster.workers;
  out.sync.algorithm = model::to_string(cfg.sync.algorithm);
  out.flops_per_example = net.flops_per_example();
  if (c.net)
  {
    out.net = net_metrics{c.net->config().latency_us, c.net->config().bandwidth_gbps,
                          c.net->config().dilation, c.net->bytes_moved()};
    out.host_examples_per_second =
      host_examples_per_second(reports, cfg.cluster.workers, c.net->config().dilation);
  }
  progress_sample fin;
  fin.examples = out.examples;
  fin.train_ne = out.train_ne;
  fin.sync_gap = out.sync.sync_gap_mean;
  fin.fraction_done = 1;
  progress.finish(fin);

  // Evaluation state: the shards' rows and the chosen dense parameters.
  std::optional<std::string> eval_err;
  if (!cfg.data.eval.empty()) {
    const auto& a = cfg.arch;
    model::embedding_tables tables(a.num_tables, a.rows_per_table, a.dim, 0);
    const std::size_t e = c.shards.size();
    const std::uint64_t local_rows = (a.rows_per_table + e - 1) / e;
    for (std::size_t s = 0; s < e && !eval_err; ++s)
      self->request(c.shards[s], cfg.cluster.timeout, dump_atom::value)
        .receive(
          [&](float_blob& blob) {
            for (std::size_t t = 0; t < a.num_tables; ++t)
              for (std::uint64_t l = 0; l < local_rows; ++l) {
                const std::uint64_t row = l * e + s;
                if (row >= a.rows_per_table)
                  continue;
                const float* src = blob.data() + (t * local_rows + l) * a.dim;
                std::copy(src, src + a.dim, tables.row(model::row_key(t, row)));
              }
          },
          [&](caf::error& err) { eval_err = "embedding shard dump failed: " + render(sys, err); });
    std::string which = cfg.sync.eval_model;
    if (which == "auto")
      which = cfg.sync.algorithm == model::sync_algorithm::none ? "trainer0" : "average";
    std::vector<float> params = which == "trainer0" ? reports[0].replica.values
                                                    : average_replicas(reports);
    if (which == "centre")
      for (std::size_t d = 0; d < c.dense.size() && !eval_err; ++d)
        self->request(c.dense[d], cfg.cluster.timeout, dump_atom::value)
          .receive([&](dense_range& r) {
                     std::copy(r.values.values.begin(), r.values.values.end(),
                               params.begin() + std::ptrdiff_t(r.offset));
                   },
                   [&](caf::error& err) { eval_err = "dense shard dump failed: " + render(sys, err); });
    out.eval_model = which;
    if (!eval_err)
      eval_err = evaluate_model(cfg, net, params.data(), tables, cfg.data.eval, out);
  }
  shutdown();
  return eval_err;
}

} // namespace runtime
