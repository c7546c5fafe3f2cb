// The coordinator actor (cluster/coordinator_actor.hpp) walked message by
// message on CAF's deterministic scheduler, against fake trainers, syncers
// and a fake caller: the first ring, the progress poll and its hook, a
// trainer lost during training (the ring re-formed among the survivors), the
// coordinated stop's last round and reports, a loss during the stop, a
// trainer that never answers, a shard restarted (partial recovery) and the
// rollbacks of full recovery.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <caf/all.hpp>

#include "actors/interfaces.hpp"
#include "cluster/coordinator_actor.hpp"
#include "messages/errors.hpp"
#include "tests/actors/test_fixture.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace coordinator_actor_test {

using namespace messages;
using runtime::coordinator_outcome;

namespace {

// What the fakes saw.
struct walk_log {
  // Per syncer: the peers messages, as (generation, rank, members).
  struct wiring {
    std::uint32_t generation, rank;
    std::size_t members;
  };
  std::vector<std::vector<wiring>> wirings;
  std::vector<int> starts, stops;          // per trainer: requests seen
  std::vector<std::uint64_t> stop_rounds;  // per trainer: stop's last round
  std::vector<std::uint64_t> polled;       // the caller's polled hooks: examples
  int started = 0, trained = 0;
  std::optional<coordinator_outcome> outcome;
  // (trainer, shard, handle) of every rebind a trainer got.
  std::vector<std::tuple<std::uint32_t, std::uint32_t, caf::strong_actor_ptr>> rebinds;
  // What the caller's hooks answer: a polled hook's error ("" none), and a
  // restart (the test puts a new shard in place).
  std::string poll_error;
  std::function<std::string(std::size_t)> restart;
  // The caller's restarted hooks: (shard, its reload).
  std::vector<std::pair<std::size_t, runtime::shard_restart>> restarted;
};

// Answers a readiness lookup (a lookup of no keys). (The unused argument:
// CAF 0.17's init_fun_factory dereferences a null shared_ptr<tuple<>> for an
// actor function without arguments, which UBSan reports; test_fixture.hpp.)
caf::behavior fake_shard(caf::event_based_actor*, int) {
  return {
    [](lookup_atom, lookup_request&) { return embedding_rows{}; },
    // A restarted shard's reload: 64 bytes, 1 save, taken at 0 ns, ready at 5 ns.
    [](actors::recover_atom) {
      return std::make_tuple(std::uint64_t{64}, std::uint64_t{1}, std::int64_t{0},
                             std::int64_t{5});
    },
  };
}

caf::behavior fake_syncer(caf::event_based_actor*, std::shared_ptr<walk_log> log, std::size_t i) {
  return {
    [=](peers_atom, std::uint32_t rank, std::vector<caf::strong_actor_ptr>& all) {
      log->wirings[i].push_back({0, rank, all.size()});
    },
    [=](peers_atom, std::uint32_t gen, std::uint32_t rank, std::vector<caf::strong_actor_ptr>& all) {
      log->wirings[i].push_back({gen, rank, all.size()});
    },
  };
}

struct fake_trainer_state {
  caf::typed_response_promise<worker_stats> start;
  std::uint64_t examples = 0;
};

// Answers peers with its syncer, stats with `examples`, sync with `round`;
// start when told (done_atom), stop with a report of 3 floats. A `silent`
// trainer answers neither peers nor stats, a `holding` one never answers sync.
actors::trainer_actor::behavior_type
fake_trainer(actors::trainer_actor::stateful_pointer<fake_trainer_state> self,
             std::shared_ptr<walk_log> log, std::uint32_t i, caf::strong_actor_ptr syncer,
             std::uint64_t round, bool silent, bool holding) {
  self->state.examples = 100 * (i + 1);
  return {
    [=](start_atom) -> caf::typed_response_promise<worker_stats> {
      ++log->starts[i];
      self->state.start = self->make_response_promise<worker_stats>();
      return self->state.start;
    },
    [=](done_atom, worker_stats& w) { self->state.start.deliver(w); },
    [=](stats_atom) -> caf::result<progress_report> {
      if (silent)
        return self->make_response_promise<progress_report>();
      progress_report p;
      p.examples = self->state.examples;
      return p;
    },
    [=](peers_atom) -> caf::result<caf::strong_actor_ptr> {
      if (silent)
        return self->make_response_promise<caf::strong_actor_ptr>();
      return syncer;
    },
    [=](sync_atom) -> caf::result<std::uint64_t> {
      if (holding)
        return self->make_response_promise<std::uint64_t>();
      return round;
    },
    [=](stop_atom, std::uint64_t last) {
      ++log->stops[i];
      log->stop_rounds[i] = last;
      trainer_report r;
      r.trainer = i;
      r.replica.values.assign(3, float(i));
      return r;
    },
    [=](cut_atom, std::uint64_t, std::uint64_t) { return cut_report{}; },
    [=](workers_atom) { return std::vector<caf::strong_actor_ptr>{}; },
    [=](parked_atom, std::uint64_t) {},
    [=](resume_atom) {},
    [=](rebind_atom, std::uint32_t shard, caf::strong_actor_ptr& h) {
      log->rebinds.emplace_back(i, shard, h);
    },
  };
}

caf::behavior fake_caller(caf::event_based_actor*, std::shared_ptr<walk_log> log) {
  return {
    [=](messages::started_atom, std::int64_t, std::vector<caf::strong_actor_ptr>&) {
      ++log->started;
    },
    [=](messages::polled_atom, progress_report& p) {
      log->polled.push_back(p.examples);
      return std::make_tuple(log->poll_error, false);
    },
    [=](messages::trained_atom) {
      ++log->trained;
      return std::vector<caf::actor_addr>{};
    },
    [=](messages::restart_atom, std::uint64_t shard, std::string&, std::uint64_t) {
      return log->restart(std::size_t(shard));
    },
    [=](messages::restarted_atom, std::uint64_t shard, runtime::shard_restart& r) {
      log->restarted.emplace_back(std::size_t(shard), r);
    },
    [=](coordinator_outcome& o) { log->outcome = std::move(o); },
  };
}

struct walk : test::actor_fixture {
  std::shared_ptr<walk_log> log = std::make_shared<walk_log>();
  runtime::train_config cfg;
  runtime::cluster_handles c;
  caf::actor caller;
  std::vector<caf::actor> syncers;

  // n trainers answering sync with rounds[i]; silent ones answer nothing.
  void build(std::size_t n, model::sync_algorithm algo, std::vector<std::uint64_t> rounds,
             std::vector<bool> silent = {}, std::vector<bool> holding = {}) {
    build_shards(0);
    cfg.sync.algorithm = algo;
    cfg.cluster.timeout = std::chrono::milliseconds(1000);
    silent.resize(n, false);
    holding.resize(n, false);
    log->wirings.resize(n);
    log->starts.assign(n, 0);
    log->stops.assign(n, 0);
    log->stop_rounds.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      syncers.push_back(sys.spawn(fake_syncer, log, i));
      c.trainers.push_back(sys.spawn(fake_trainer, log, std::uint32_t(i),
                                     caf::actor_cast<caf::strong_actor_ptr>(syncers[i]),
                                     rounds[i], bool(silent[i]), bool(holding[i])));
      c.trainer_names.push_back("trainer-" + std::to_string(i));
    }
    caller = sys.spawn(fake_caller, log);
  }

  void build_shards(std::size_t n) {
    c.shards.clear();
    c.shard_names.clear();
    for (std::size_t i = 0; i < n; ++i) {
      c.shards.push_back(
        caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(fake_shard, 0)));
      c.shard_names.push_back("embedding shard " + std::to_string(i));
    }
  }

  actors::coordinator_actor start(bool tolerate, bool restart_shards = false,
                                   bool rollback = false) {
    runtime::coordinator_setup s;
    s.cfg = &cfg;
    s.cluster = &c;
    s.caller = caller;
    s.tolerate_trainer_loss = tolerate;
    s.restart_shards = restart_shards;
    s.rollback_on_shard_loss = rollback;
    s.on_trained = true;
    s.poll_interval = std::chrono::milliseconds(10);
    auto coord = runtime::spawn_coordinator(sys, s);
    self->send(coord, messages::begin_atom::value);
    run();
    return coord;
  }

  void finish_training(std::size_t i) {
    worker_stats w;
    w.examples = 10;
    self->send(c.trainers[i], done_atom::value, w);
    run();
  }

  ~walk() {
    for (auto& t : c.trainers)
      self->send_exit(t, caf::exit_reason::user_shutdown);
    for (auto& x : c.shards)
      self->send_exit(x, caf::exit_reason::user_shutdown);
    for (auto& s : syncers)
      self->send_exit(s, caf::exit_reason::user_shutdown);
    self->send_exit(caller, caf::exit_reason::user_shutdown);
    run();
  }
};

// The job ended in a rollback named by embedding shard 0's loss.
void check_rollback_for_shard_0(const walk_log& log) {
  REQUIRE(log.outcome);
  CHECK_FALSE(log.outcome->failure);
  REQUIRE(log.outcome->rollback);
  CHECK(log.outcome->rollback->shard == std::optional<std::size_t>{0});
  CHECK(log.outcome->rollback->why.find("embedding shard 0 is down") != std::string::npos);
}

} // namespace

TEST_CASE_FIXTURE(walk, "coordinator actor: a ring of 3 wired, polled, one trainer lost, stopped") {
  build(3, model::sync_algorithm::s_ma, {5, 9, 7});
  auto coord = start(/*tolerate=*/true);
  // 1. Wired: every syncer got rank r of 3; every trainer was started (no
  // embedding shards to wait for) after the caller's started hook.
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(log->wirings[i].size() == 1);
    CHECK(log->wirings[i][0].generation == 0);
    CHECK(log->wirings[i][0].rank == i);
    CHECK(log->wirings[i][0].members == 3);
    CHECK(log->starts[i] == 1);
  }
  CHECK(log->started == 1);
  // 2. The poll: 10 ms without a message, then every trainer's stats summed
  // for the caller.
  CHECK(log->polled.empty());
  advance(std::chrono::milliseconds(10));
  REQUIRE(log->polled.size() == 1);
  CHECK(log->polled[0] == 100 + 200 + 300);
  // Trainer 1 goes down: the ring is re-formed among 0 and 2, generation 1.
  self->send_exit(c.trainers[1], caf::exit_reason::kill);
  run();
  CHECK(log->wirings[0].back().generation == 1);
  CHECK(log->wirings[0].back().members == 2);
  CHECK(log->wirings[2].back().generation == 1);
  CHECK(log->wirings[2].back().rank == 1);
  CHECK(log->wirings[1].size() == 1); // the lost one is left out
  advance(std::chrono::milliseconds(10));
  REQUIRE(log->polled.size() == 2);
  CHECK(log->polled[1] == 100 + 300); // the survivors only
  // 3. Both survivors' data done: the coordinated stop at max(5, 7) + 1.
  finish_training(0);
  CHECK(log->stops[0] == 0); // trainer 2 still trains
  finish_training(2);
  CHECK(log->trained == 1);
  CHECK(log->stops[0] == 1);
  CHECK(log->stops[2] == 1);
  CHECK(log->stops[1] == 0);
  CHECK(log->stop_rounds[0] == 8);
  CHECK(log->stop_rounds[2] == 8);
  REQUIRE(log->outcome);
  const auto& o = *log->outcome;
  CHECK_FALSE(o.failure);
  CHECK(o.alive == std::vector<bool>{true, false, true});
  REQUIRE(o.lost.size() == 1);
  CHECK(o.lost[0].rfind("trainer-1 lost after", 0) == 0);
  REQUIRE(o.reports.size() == 3);
  CHECK(o.reports[2].trainer == 2);
  CHECK(o.reports[2].replica.values.size() == 3);
  // The coordinator quit with its outcome.
  advance(std::chrono::milliseconds(100));
  CHECK(log->polled.size() == 2);
}

TEST_CASE_FIXTURE(walk, "coordinator actor: a trainer lost during the coordinated stop fails the job") {
  // Trainer 1 never answers sync: the stop waits in `rounds` for it.
  build(2, model::sync_algorithm::s_ma, {1, 1}, {}, {false, true});
  auto coord = start(/*tolerate=*/true);
  finish_training(1);
  finish_training(0);
  CHECK(log->trained == 1);
  CHECK_FALSE(log->outcome);
  self->send_exit(c.trainers[1], caf::exit_reason::kill);
  run();
  REQUIRE(log->outcome);
  REQUIRE(log->outcome->failure);
  CHECK(log->outcome->failure->find("trainer-1 went down during the coordinated stop") !=
        std::string::npos);
  CHECK(log->stops[0] == 0);
}

TEST_CASE_FIXTURE(walk, "coordinator actor: a trainer lost without tolerate_trainer_loss ends the job") {
  build(2, model::sync_algorithm::s_easgd, {0, 0});
  auto coord = start(/*tolerate=*/false);
  CHECK(log->wirings[0].empty()); // EASGD: no ring
  self->send_exit(c.trainers[0], caf::exit_reason::kill);
  run();
  REQUIRE(log->outcome);
  REQUIRE(log->outcome->failure);
  CHECK(log->outcome->failure->find("trainer-0 is down") != std::string::npos);
  CHECK(log->stops[1] == 0);
}

TEST_CASE_FIXTURE(walk, "coordinator actor: a trainer that never answers is named after the timeout") {
  build(3, model::sync_algorithm::s_ma, {0, 0, 0}, {false, true, false});
  auto coord = start(true);
  CHECK(log->started == 0); // still wiring: trainer 1 has not answered peers
  CHECK_FALSE(log->outcome);
  advance(std::chrono::milliseconds(999));
  CHECK_FALSE(log->outcome);
  advance(std::chrono::milliseconds(1));
  REQUIRE(log->outcome);
  REQUIRE(log->outcome->failure);
  CHECK(*log->outcome->failure == "no reply from trainer-1 within 1000 ms");
  CHECK(log->started == 0);
}

TEST_CASE_FIXTURE(walk, "coordinator actor: a lost shard restarted by the caller is rebound on "
                        "every live trainer and monitored") {
  build(2, model::sync_algorithm::s_easgd, {0, 0});
  build_shards(2);
  int restarts = 0;
  log->restart = [&](std::size_t i) {
    ++restarts;
    c.shards[i] = caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(fake_shard, 0));
    return std::string{};
  };
  auto coord = start(/*tolerate=*/true, /*restart_shards=*/true);
  REQUIRE(log->started == 1); // both shards answered their readiness lookup
  self->send_exit(c.shards[1], caf::exit_reason::kill);
  run();
  CHECK(restarts == 1);
  // The coordinator had the new shard reload, and told the caller.
  REQUIRE(log->restarted.size() == 1);
  CHECK(log->restarted[0].first == 1);
  CHECK(log->restarted[0].second.bytes == 64);
  CHECK(log->restarted[0].second.saves == 1);
  CHECK(log->restarted[0].second.ready_ns == 5);
  REQUIRE(log->rebinds.size() == 2); // one per trainer, shard 1, the new handle
  for (std::uint32_t t = 0; t < 2; ++t) {
    CHECK(std::get<0>(log->rebinds[t]) == t);
    CHECK(std::get<1>(log->rebinds[t]) == 1);
    CHECK(std::get<2>(log->rebinds[t]) == caf::actor_cast<caf::strong_actor_ptr>(c.shards[1]));
  }
  // The new shard is monitored: its loss is restarted too.
  self->send_exit(c.shards[1], caf::exit_reason::kill);
  run();
  CHECK(restarts == 2);
  CHECK(log->rebinds.size() == 4);
  CHECK_FALSE(log->outcome);
  finish_training(0);
  finish_training(1);
  REQUIRE(log->outcome);
  CHECK_FALSE(log->outcome->failure);
}

TEST_CASE_FIXTURE(walk, "coordinator actor: a restart that fails ends the job with its error") {
  build(2, model::sync_algorithm::s_easgd, {0, 0});
  build_shards(1);
  log->restart = [](std::size_t) { return std::string{"no checkpoint to reload"}; };
  auto coord = start(true, true);
  self->send_exit(c.shards[0], caf::exit_reason::kill);
  run();
  REQUIRE(log->outcome);
  REQUIRE(log->outcome->failure);
  CHECK(*log->outcome->failure == "no checkpoint to reload");
  CHECK(log->rebinds.empty());
}

TEST_CASE_FIXTURE(walk, "coordinator actor: under full recovery a loss rolls back, named by the "
                        "lost shard when its DOWN is already in") {
  build(2, model::sync_algorithm::s_easgd, {0, 0});
  build_shards(1);
  auto coord = start(/*tolerate=*/false, /*restart_shards=*/false, /*rollback=*/true);
  // The trainer's DOWN comes first; the shard's is in the mailbox before the
  // coordinator ends.
  self->send_exit(c.trainers[1], caf::exit_reason::kill);
  self->send_exit(c.shards[0], caf::exit_reason::kill);
  run();
  check_rollback_for_shard_0(*log);
  CHECK(log->stops == std::vector<int>{0, 0});
}

TEST_CASE_FIXTURE(walk, "coordinator actor: under full recovery a trainer's report of its lost "
                        "shard waits for the shard's own DOWN to name the cause") {
  build(2, model::sync_algorithm::s_easgd, {0, 0});
  build_shards(1);
  auto coord = start(/*tolerate=*/false, /*restart_shards=*/false, /*rollback=*/true);
  // A trainer on another node saw the shard's node die first (multi-node:
  // its direct link) and quit with shard_down; the shard's DOWN comes later.
  self->send_exit(c.trainers[0], messages::make_error(messages::errc::shard_down,
                                                      "trainer-0: embedding-shard-0 failed"));
  run();
  CHECK_FALSE(log->outcome);
  advance(std::chrono::milliseconds(500));
  CHECK_FALSE(log->outcome);
  self->send_exit(c.shards[0], caf::exit_reason::kill);
  run();
  check_rollback_for_shard_0(*log);
}

TEST_CASE_FIXTURE(walk, "coordinator actor: under full recovery a trainer's report of its lost "
                        "shard rolls back after the timeout when no shard's DOWN comes") {
  build(2, model::sync_algorithm::s_easgd, {0, 0});
  build_shards(1);
  auto coord = start(false, false, /*rollback=*/true);
  self->send_exit(c.trainers[0], messages::make_error(messages::errc::shard_down,
                                                      "trainer-0: embedding-shard-0 failed"));
  run();
  advance(std::chrono::milliseconds(999));
  CHECK_FALSE(log->outcome);
  advance(std::chrono::milliseconds(1));
  REQUIRE(log->outcome);
  CHECK_FALSE(log->outcome->failure);
  REQUIRE(log->outcome->rollback);
  CHECK_FALSE(log->outcome->rollback->shard);
  CHECK(log->outcome->rollback->why.find("trainer-0 is down") != std::string::npos);
}

TEST_CASE_FIXTURE(walk, "coordinator actor: under full recovery a failed cut rolls back with its "
                        "error") {
  build(2, model::sync_algorithm::s_easgd, {0, 0});
  log->poll_error = "checkpoint: disk full";
  auto coord = start(false, false, /*rollback=*/true);
  CHECK_FALSE(log->outcome);
  advance(std::chrono::milliseconds(10));
  REQUIRE(log->polled.size() == 1);
  REQUIRE(log->outcome);
  CHECK_FALSE(log->outcome->failure);
  REQUIRE(log->outcome->rollback);
  CHECK_FALSE(log->outcome->rollback->shard);
  CHECK(log->outcome->rollback->why == "checkpoint: disk full");
  CHECK(log->outcome->rollback->examples == 100 + 200); // the poll's examples
}

} // namespace coordinator_actor_test
