// The checkpoint cuts as continuations of the coordinator actor
// (cluster/cut_run.hpp, cluster/coordinator_cuts.cpp), walked on CAF's
// deterministic scheduler against fake trainers, shards and caller: a cut the
// poll asks for is taken while the coordinator keeps handling its messages,
// committed, and polls go on after it; a shard that goes down holding its
// cut request aborts the cut at once (no wait for cluster.timeout), the
// trainers already asked are released, and the job ends naming the cut and
// the shard; a trainer's loss during a cut aborts the cut but not the job.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include <caf/all.hpp>

#include "actors/interfaces.hpp"
#include "cluster/cluster_cut.hpp"
#include "checkpoint/model_files.hpp"
#include "checkpoint/store.hpp"
#include "cluster/coordinator_actor.hpp"
#include "tests/actors/test_fixture.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace coordinator_cut_test {

using namespace messages;

namespace {

struct cut_log {
  std::vector<int> cuts, resumes; // per trainer
  std::vector<int> shard_cuts;    // per shard: cut requests seen
  // per shard: the workers of its newest cut request asked over a list (a
  // cut after a trainer's loss), else -1
  std::vector<int> listed_workers;
  int workers_asked = 0;          // trainers' workers requests
  int aims = 0;                   // aim requests the syncers got
  std::vector<caf::actor> syncers; // ring methods: trainer i's syncer (else none)
  std::vector<int> given_up;      // per shard: cuts the coordinator gave up
  int polls = 0;
  int cuts_asked = 1;             // the polled hook asks for this many cuts
  std::vector<std::string> cut_ends; // the caller's cut(failure) hooks ("" committed)
  std::optional<runtime::coordinator_outcome> outcome;
  bool shards_answer = true;      // false: a shard holds its cut request
  int hold_shard = -1;            // >= 0: only this shard holds it
  // The cut requests held: the promise, the cut's folder and id, the shard
  // (which answers its own with done_atom).
  struct held_cut {
    caf::typed_response_promise<shard_cut_file> rp;
    std::string folder;
    std::uint64_t id;
    std::size_t shard;
  };
  std::vector<held_cut> held;
  // Partial recovery: the caller's restart hook (puts a new shard in place;
  // its cut argument), its restarted notices, and the rebinds the trainers got.
  std::function<std::string(std::size_t)> restart;
  std::vector<std::uint64_t> restart_cuts;
  int restarted = 0, rebinds = 0;
};

// An empty file as shard s's part of cut id, in the cut's folder (so that
// the committed checkpoint opens).
shard_cut_file empty_file(const std::string& folder, std::size_t s, std::uint64_t id) {
  const auto name = "shard-" + std::to_string(s) + "-" + std::to_string(id) + ".bin";
  std::ofstream(folder + "/" + name).flush();
  return shard_cut_file{name, 0, 0, 0, 0};
}

// Answers a readiness lookup; a cut with its file at once, or (holding)
// never. (Untyped, cast to the shard's handle: the coordinator sends it no
// more. The unused argument: see coordinator_actor_test.cpp.)
caf::behavior fake_shard(caf::event_based_actor* self, std::shared_ptr<cut_log> log,
                         std::size_t s) {
  return {
    [](lookup_atom, lookup_request&) { return embedding_rows{}; },
    [](actors::recover_atom) {
      return std::make_tuple(std::uint64_t{64}, std::uint64_t{1}, std::int64_t{0},
                             std::int64_t{0});
    },
    [=](cut_atom, std::uint64_t id, std::string& folder,
        std::vector<std::string>& ws) -> caf::result<shard_cut_file> {
      ++log->shard_cuts[s];
      log->listed_workers[s] = int(ws.size());
      if (int(s) != log->hold_shard)
        return empty_file(folder, s, id);
      auto rp = self->make_response_promise<shard_cut_file>();
      log->held.push_back({rp, folder, id, s});
      return rp;
    },
    [=](cut_atom, std::uint64_t, resume_atom) { ++log->given_up[s]; },
    [=](done_atom, std::uint64_t id) { // answers its held request of cut id at last
      for (auto& h : log->held)
        if (h.shard == s && h.id == id && h.rp.pending())
          h.rp.deliver(empty_file(h.folder, s, id));
    },
    [=](cut_atom, std::uint64_t id, std::string& folder,
        std::uint32_t) -> caf::result<shard_cut_file> {
      ++log->shard_cuts[s];
      log->listed_workers[s] = -1;
      auto rp = self->make_response_promise<shard_cut_file>();
      const bool holds = log->hold_shard >= 0 ? int(s) == log->hold_shard : !log->shards_answer;
      if (!holds)
        rp.deliver(empty_file(folder, s, id));
      else {
        log->held.push_back({rp, folder, id, s});
      }
      return rp;
    },
  };
}

// A ring method's syncer: takes its wiring; aim(R) is held, never answered
// (a cut still aiming when a trainer is lost).
caf::behavior fake_syncer(caf::event_based_actor* self, std::shared_ptr<cut_log> log) {
  return {
    [](peers_atom, std::uint32_t, std::vector<caf::strong_actor_ptr>&) {},
    [](peers_atom, std::uint32_t, std::uint32_t, std::vector<caf::strong_actor_ptr>&) {},
    [=](aim_atom, std::uint64_t) {
      ++log->aims;
      return self->make_response_promise<std::uint64_t>();
    },
  };
}

struct fake_trainer_state {
  caf::typed_response_promise<worker_stats> start;
};

actors::trainer_actor::behavior_type
fake_trainer(actors::trainer_actor::stateful_pointer<fake_trainer_state> self,
             std::shared_ptr<cut_log> log, std::uint32_t i) {
  return {
    [=](start_atom) {
      self->state.start = self->make_response_promise<worker_stats>();
      return self->state.start;
    },
    [=](done_atom, worker_stats& w) { self->state.start.deliver(w); },
    [=](stats_atom) {
      progress_report p;
      p.examples = 1000;
      return p;
    },
    [=](peers_atom) {
      return i < log->syncers.size() ? caf::actor_cast<caf::strong_actor_ptr>(log->syncers[i])
                                     : caf::strong_actor_ptr{};
    },
    [=](sync_atom) { return std::uint64_t{0}; },
    [=](stop_atom, std::uint64_t) {
      trainer_report r;
      r.trainer = i;
      r.replica.values.assign(3, 0.5f);
      return r;
    },
    [=](cut_atom, std::uint64_t, std::uint64_t) {
      ++log->cuts[i];
      cut_report r;
      r.trainer = i;
      r.replica.values.assign(3, 0.5f + float(log->cuts[i])); // (moves from cut to cut)
      r.state.values.assign(3, 0.25f);
      r.reader.examples = 100 * std::uint64_t(log->cuts[i]) + i;
      r.reader.lines = r.reader.examples;
      r.progress.examples = r.reader.examples;
      return r;
    },
    [=](workers_atom) {
      ++log->workers_asked;
      // (two stand-ins for its workers: itself, twice would be refused)
      return std::vector<caf::strong_actor_ptr>{caf::actor_cast<caf::strong_actor_ptr>(self)};
    },
    [=](parked_atom, std::uint64_t) {},
    [=](resume_atom) { ++log->resumes[i]; },
    [=](rebind_atom, std::uint32_t, caf::strong_actor_ptr&) { ++log->rebinds; },
  };
}

caf::behavior fake_caller(caf::event_based_actor*, std::shared_ptr<cut_log> log) {
  return {
    [=](started_atom, std::int64_t, std::vector<caf::strong_actor_ptr>&) {},
    [=](polled_atom, progress_report&) {
      ++log->polls;
      const bool cut = log->cuts_asked > 0;
      log->cuts_asked -= cut ? 1 : 0;
      return std::make_tuple(std::string{}, cut);
    },
    [=](cut_atom, std::string& failure) {
      log->cut_ends.push_back(failure);
      return std::string{};
    },
    [=](trained_atom) { return std::vector<caf::actor_addr>{}; },
    [=](restart_atom, std::uint64_t shard, std::string&, std::uint64_t cut) {
      log->restart_cuts.push_back(cut);
      return log->restart(std::size_t(shard));
    },
    [=](restarted_atom, std::uint64_t, runtime::shard_restart&) { ++log->restarted; },
    [=](runtime::coordinator_outcome& o) { log->outcome = std::move(o); },
  };
}

struct cut_walk : test::actor_fixture {
  std::shared_ptr<cut_log> log = std::make_shared<cut_log>();
  runtime::train_config cfg;
  runtime::cluster_handles c;
  caf::actor caller;
  std::string dir;
  std::unique_ptr<runtime::cluster_checkpointer> ck;

  cut_walk() {
    dir = (std::filesystem::temp_directory_path() /
           ("ss-coordinator-cut-" + std::to_string(::getpid())))
            .string();
    std::filesystem::remove_all(dir);
    cfg.sync.algorithm = model::sync_algorithm::none;
    // Long: a cut that waited for a request's timeout would not end here.
    cfg.cluster.timeout = std::chrono::milliseconds(60000);
    cfg.cluster.trainers = 2;
    cfg.cluster.workers = 1;
    cfg.checkpoint.dir = dir;
    log->cuts.assign(2, 0);
    log->resumes.assign(2, 0);
    log->shard_cuts.assign(2, 0);
    log->listed_workers.assign(2, -1);
    log->given_up.assign(2, 0);
    log->held.clear();
    for (std::uint32_t i = 0; i < 2; ++i) {
      c.trainers.push_back(sys.spawn(fake_trainer, log, i));
      c.trainer_names.push_back("trainer-" + std::to_string(i));
      c.shards.push_back(caf::actor_cast<actors::embedding_shard_actor>(
        sys.spawn(fake_shard, log, std::size_t(i))));
      c.shard_names.push_back("embedding shard " + std::to_string(i));
    }
    caller = sys.spawn(fake_caller, log);
    ck = std::make_unique<runtime::cluster_checkpointer>(sys, cfg, c, runtime::resume_base{});
  }

  void start(bool restart_shards = false, bool tolerate_trainer_loss = false) {
    runtime::coordinator_setup s;
    s.restart_shards = restart_shards;
    s.tolerate_trainer_loss = tolerate_trainer_loss;
    s.cfg = &cfg;
    s.cluster = &c;
    s.caller = caller;
    s.on_trained = true;
    s.poll_interval = std::chrono::milliseconds(10);
    s.checkpoints = ck.get();
    self->send(runtime::spawn_coordinator(sys, s), begin_atom::value);
    run();
  }

  // The given trainers end their work: the job ends without a failure.
  void finish(const std::vector<std::size_t>& trainers) {
    worker_stats w;
    w.examples = 10;
    for (auto t : trainers)
      self->send(c.trainers[t], done_atom::value, w);
    run();
    REQUIRE(log->outcome);
    CHECK_FALSE(log->outcome->failure);
  }

  ~cut_walk() {
    for (auto& t : c.trainers)
      self->send_exit(t, caf::exit_reason::user_shutdown);
    for (auto& x : c.shards)
      self->send_exit(x, caf::exit_reason::user_shutdown);
    self->send_exit(caller, caf::exit_reason::user_shutdown);
    run();
    std::filesystem::remove_all(dir);
  }
};

} // namespace

TEST_CASE_FIXTURE(cut_walk, "coordinator cut: taken by the coordinator actor, committed, and the "
                            "polls go on after it") {
  start();
  advance(std::chrono::milliseconds(10)); // the poll asks for a cut
  CHECK(log->polls == 1);
  CHECK(log->shard_cuts == std::vector<int>{1, 1});
  CHECK(log->cuts == std::vector<int>{1, 1});
  CHECK(log->resumes == std::vector<int>{1, 1});
  REQUIRE(log->cut_ends.size() == 1);
  CHECK(log->cut_ends[0].empty());
  CHECK(ck->totals().cuts == 1);
  CHECK(std::filesystem::exists(ck->newest() + "/manifest.json"));
  advance(std::chrono::milliseconds(10)); // polls again, no cut asked
  CHECK(log->polls == 2);
  CHECK(log->cuts == std::vector<int>{1, 1});
  CHECK_FALSE(log->outcome);
}

TEST_CASE_FIXTURE(cut_walk, "coordinator cut: a shard that goes down holding its cut request "
                            "aborts the cut at once and ends the job naming both") {
  log->shards_answer = false;
  start();
  advance(std::chrono::milliseconds(10));
  // The cut is in flight: every trainer cut and resumed, the shards' files
  // awaited.
  CHECK(log->shard_cuts == std::vector<int>{1, 1});
  CHECK(log->cuts == std::vector<int>{1, 1});
  CHECK(log->resumes == std::vector<int>{1, 1});
  CHECK(log->cut_ends.empty());
  // Shard 1 dies holding the request (CAF 0.17 answers nothing for it). No
  // virtual time passes: the cut's requests (60 s) cannot time out.
  self->send_exit(c.shards[1], caf::exit_reason::kill);
  run();
  REQUIRE(log->cut_ends.size() == 1);
  CHECK(log->cut_ends[0] ==
        "checkpoint: cut 1 aborted: embedding shard 1 is down (exit_reason(kill))");
  REQUIRE(log->outcome);
  REQUIRE(log->outcome->failure);
  CHECK(*log->outcome->failure == log->cut_ends[0]);
  CHECK(log->resumes == std::vector<int>{1, 1}); // (released once)
  CHECK(ck->totals().cuts == 0);
}

TEST_CASE_FIXTURE(cut_walk, "coordinator cut: a trainer's DOWN while the cut waits releases the "
                            "others and ends the job") {
  log->shards_answer = false;
  start();
  advance(std::chrono::milliseconds(10));
  REQUIRE(log->cuts == std::vector<int>{1, 1});
  self->send_exit(c.trainers[0], caf::exit_reason::kill);
  run();
  REQUIRE(log->cut_ends.size() == 1);
  CHECK(log->cut_ends[0] == "checkpoint: cut 1 aborted: trainer-0 is down (exit_reason(kill))");
  REQUIRE(log->outcome);
  REQUIRE(log->outcome->failure);
  CHECK(log->outcome->failure->find("cut 1 aborted: trainer-0 is down") != std::string::npos);
}

TEST_CASE_FIXTURE(cut_walk, "coordinator cut: where trainer losses are tolerated, a trainer's DOWN "
                            "while the cut waits aborts it, and the next cut holds its part as "
                            "at the cut before") {
  log->cuts_asked = 3; // cut 1 commits, cut 2 is aborted by the loss, cut 3 follows it
  start(/*restart_shards=*/false, /*tolerate_trainer_loss=*/true);
  advance(std::chrono::milliseconds(10));
  REQUIRE(ck->totals().cuts == 1);
  REQUIRE(log->cuts == std::vector<int>{1, 1});
  log->shards_answer = false; // cut 2 waits for the shards
  advance(std::chrono::milliseconds(10));
  REQUIRE(log->cuts == std::vector<int>{2, 2});
  self->send_exit(c.trainers[0], caf::exit_reason::kill);
  run();
  // Aborted (nothing committed), the trainers released, but a trainer's
  // loss is one the job survives, during a cut as at any other time: the
  // caller hears of a cut that ended without an error.
  REQUIRE(log->cut_ends.size() == 2);
  CHECK(log->cut_ends[1].empty());
  CHECK_FALSE(log->outcome);
  CHECK(ck->totals().cuts == 1);
  CHECK(log->resumes == std::vector<int>{2, 2});
  // The next cut is taken without the lost trainer: only the survivor is
  // asked for its workers and its part, the shards align over its workers
  // alone (a list of one), and it commits.
  log->shards_answer = true;
  advance(std::chrono::milliseconds(10));
  CHECK(log->polls == 3);
  REQUIRE(log->cut_ends.size() == 3);
  CHECK(log->cut_ends[2].empty());
  CHECK(log->workers_asked == 1);
  CHECK(log->cuts == std::vector<int>{2, 3});
  CHECK(log->resumes == std::vector<int>{2, 3});
  CHECK(log->shard_cuts == std::vector<int>{3, 3});
  CHECK(log->listed_workers == std::vector<int>{1, 1});
  REQUIRE(ck->totals().cuts == 2);
  // Its manifest: trainer 0 at its position of cut 1 (100 examples), with
  // the survivor's replica (the average of the live ones); trainer 1 at cut 3.
  checkpoint::opened_checkpoint k;
  REQUIRE_FALSE(checkpoint::open_checkpoint(ck->newest(), k));
  REQUIRE(k.m.readers.size() == 2);
  CHECK(k.m.readers[0].examples == 100);
  CHECK(k.m.readers[1].examples == 301);
  CHECK(k.m.examples == 100 + 301);
  std::vector<checkpoint::replica_state> reps;
  REQUIRE_FALSE(checkpoint::load_replicas(k, 3, reps));
  REQUIRE(reps.size() == 2);
  CHECK(reps[0].params == std::vector<float>(3, 3.5f));
  CHECK(reps[1].params == std::vector<float>(3, 3.5f));
  CHECK(reps[0].state == std::vector<float>(3, 0.25f));
  // The survivor ends the job without a failure, the loss reported.
  finish({1});
  REQUIRE(log->outcome->lost.size() == 1);
  CHECK(log->outcome->lost[0].find("trainer-0") != std::string::npos);
}

TEST_CASE_FIXTURE(cut_walk, "coordinator cut: a shard's late answer to an aborted cut leaves "
                            "the next cut's folder alone") {
  // Cut 1 waits for shard 1 when a trainer's loss aborts it; cut 2 (after
  // the loss) waits for shard 0 when shard 1 writes its part of cut 1 at
  // last, into cut 1's folder. Cut 2 commits a checkpoint that opens: no
  // file of cut 1 in it. (Every cut had one temporary folder, so the late
  // file sat in cut 2's and the checkpoint held a file its manifest did not
  // list; in a multi-node run the aborted cut's fetching thread removed the
  // folder under the next cut.)
  log->cuts_asked = 2;
  log->hold_shard = 1;
  start(/*restart_shards=*/false, /*tolerate_trainer_loss=*/true);
  advance(std::chrono::milliseconds(10));
  REQUIRE(log->held.size() == 1);
  self->send_exit(c.trainers[0], caf::exit_reason::kill);
  run();
  REQUIRE(log->cut_ends.size() == 1); // aborted; the job goes on
  CHECK(ck->totals().cuts == 0);
  log->hold_shard = 0;
  advance(std::chrono::milliseconds(10));
  REQUIRE(log->held.size() == 2); // cut 2 waits for shard 0
  self->send(caf::actor_cast<caf::actor>(c.shards[1]), done_atom::value, std::uint64_t{1});
  run();
  self->send(caf::actor_cast<caf::actor>(c.shards[0]), done_atom::value, std::uint64_t{2});
  run();
  REQUIRE(log->cut_ends.size() == 2);
  CHECK(log->cut_ends[1].empty());
  REQUIRE(ck->totals().cuts == 1);
  checkpoint::opened_checkpoint k;
  const auto err = checkpoint::open_checkpoint(ck->newest(), k);
  CHECK_MESSAGE(!err, err.value_or(""));
  CHECK_FALSE(std::filesystem::exists(ck->newest() + "/shard-1-1.bin"));
  finish({1});
}

TEST_CASE_FIXTURE(cut_walk, "coordinator cut: a trainer lost while a ring method's cut aims "
                            "releases the survivors' syncers and the shards") {
  cfg.sync.algorithm = model::sync_algorithm::s_ma;
  for (int i = 0; i < 2; ++i)
    log->syncers.push_back(sys.spawn(fake_syncer, log));
  start(/*restart_shards=*/false, /*tolerate_trainer_loss=*/true);
  advance(std::chrono::milliseconds(10)); // the poll asks for a cut: it aims
  REQUIRE(log->aims == 1);                // (syncer 0 holds its answer)
  CHECK(log->cuts == std::vector<int>{0, 0});
  self->send_exit(c.trainers[1], caf::exit_reason::kill);
  self->send_exit(log->syncers[1], caf::exit_reason::kill);
  run();
  REQUIRE(log->cut_ends.size() == 1);
  CHECK(log->cut_ends[0].empty()); // (the job goes on)
  // Syncer 0 was aimed at a round: without a resume it would hold after it
  // for good (the job stalled). The shards hear the cut given up.
  CHECK(log->resumes == std::vector<int>{1, 0});
  CHECK(log->given_up == std::vector<int>{1, 1});
  for (auto& s : log->syncers)
    self->send_exit(s, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(cut_walk, "coordinator cut: under partial recovery a shard lost during the cut "
                            "is restarted, and the cut is taken again and committed") {
  log->hold_shard = 1; // shard 1 holds its request of cut 1, then dies with it
  int restarts = 0;
  log->restart = [&](std::size_t i) {
    ++restarts;
    c.shards[i] = caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(fake_shard, log, i));
    return std::string{};
  };
  start(/*restart_shards=*/true);
  advance(std::chrono::milliseconds(10)); // the poll asks for a cut
  CHECK(log->shard_cuts == std::vector<int>{1, 1});
  CHECK(log->cuts == std::vector<int>{1, 1});
  CHECK(log->cut_ends.empty()); // waiting for shard 1
  log->hold_shard = -1;         // (from now on every shard answers)
  self->send_exit(c.shards[1], caf::exit_reason::kill);
  run();
  // Restarted (the lost cut 1 is over for the new shard), reloaded,
  // rebound; cut 1 ended void and cut 2 was taken with the new shard.
  CHECK(restarts == 1);
  CHECK(log->restart_cuts == std::vector<std::uint64_t>{1});
  CHECK(log->restarted == 1);
  CHECK(log->rebinds == 2);
  CHECK(log->shard_cuts == std::vector<int>{2, 2});
  CHECK(log->cuts == std::vector<int>{2, 2});
  CHECK(log->resumes == std::vector<int>{2, 2});
  REQUIRE(log->cut_ends.size() == 1); // the caller hears of the cut taken again
  CHECK(log->cut_ends[0].empty());
  CHECK(ck->totals().cuts == 1);
  CHECK(std::filesystem::exists(ck->newest() + "/manifest.json"));
  CHECK_FALSE(log->outcome);
  // The job goes on: polls, then the end without a failure.
  advance(std::chrono::milliseconds(10));
  CHECK(log->polls == 2);
  finish({0, 1});
}

} // namespace coordinator_cut_test
