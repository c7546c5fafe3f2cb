// trainer with real Hogwild workers and mock reader, syncer and shards
// (worker_mocks.hpp, spawned through the trainer's test seams): a full run,
// the coordinator's requests, shutdown, and failures that must not hang.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "actors/embedding_shard.hpp"
#include "actors/trainer.hpp"
#include "model/dense_layout.hpp"
#include "tests/actors/foreign_peer.hpp"
#include "tests/actors/test_fixture.hpp"
#include "tests/actors/worker_mocks.hpp"

namespace {

using namespace messages;

struct trainer_fixture : test::actor_fixture {
  mocks::recorder_ptr rec = std::make_shared<mocks::recorder>();
  model::arch arch = mocks::small_arch();
  std::vector<float> init;
  std::vector<actors::embedding_shard_actor> shards;
  std::vector<caf::actor> watchers;
  std::size_t baseline = 0; // running actors before the trainer

  trainer_fixture() : init(model::dense_layout(arch).size()) {
    model::init_dense(model::dense_layout(arch), init.data(), 7);
    rec->manual_reader = rec->manual_shards = rec->manual_syncer = false;
    for (std::size_t s = 0; s < 2; ++s)
      shards.push_back(
        caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(mocks::shard, rec, s)));
    run();
  }

  ~trainer_fixture() {
    rec->nexts.clear();
    rec->lookups.clear();
    rec->syncs.clear();
    for (auto& s : shards)
      self->send_exit(s, caf::exit_reason::user_shutdown);
    for (auto& w : watchers)
      self->send_exit(w, caf::exit_reason::user_shutdown);
    run();
  }

  actors::trainer_actor spawn_trainer(std::size_t workers,
                                      model::sync_algorithm alg = model::sync_algorithm::none,
                                      std::uint64_t sync_every = 0) {
    actors::trainer_config cfg;
    cfg.trainer = 3;
    cfg.workers = workers;
    cfg.arch = arch;
    cfg.initial_params = init;
    cfg.shards = shards;
    cfg.syncer.algorithm = alg;
    cfg.sync_every = sync_every;
    auto r = rec;
    cfg.spawn_reader = [r](caf::actor_system& s) {
      return caf::actor_cast<actors::reader_actor>(s.spawn(mocks::reader, r));
    };
    cfg.spawn_syncer = [r](caf::actor_system& s, const actors::syncer_config& sc) {
      CHECK(sc.replica != nullptr); // filled in by the trainer
      return s.spawn(mocks::syncer, r);
    };
    baseline = sys.registry().running();
    auto t = sys.spawn(actors::trainer, cfg);
    watchers.push_back(mocks::watch(sys, t, rec, "trainer"));
    run();
    return t;
  }
};

} // namespace

TEST_CASE_FIXTURE(trainer_fixture, "trainer: a full run, its report, and shutdown") {
  rec->batches = {mocks::make_batch(0), mocks::make_batch(1, 1), mocks::make_batch(2, 2)};
  auto t = spawn_trainer(2);
  // 2 workers + the mock reader and syncer from the seams + the watcher.
  CHECK(sys.registry().running() == baseline + 5 + 1);
  auto peer = request<caf::strong_actor_ptr>(t, peers_atom::value);
  REQUIRE(peer);
  REQUIRE(*peer);

  auto done = request<worker_stats>(t, start_atom::value);
  REQUIRE(done);
  CHECK(done->examples == 15); // 3 batches of 5, split over 2 workers
  CHECK(done->batches == 3);
  CHECK(done->positives == 6); // 2 positive labels per batch
  CHECK(rec->count("syncer start") == 1);
  CHECK(rec->count("syncer end") == 1);
  CHECK(rec->count("push") == 6); // one per shard per batch
  // Both workers quit normally after reporting.
  CHECK(sys.registry().running() == baseline + 3 + 1);

  auto progress = request<progress_report>(t, stats_atom::value);
  REQUIRE(progress);
  CHECK(progress->examples == 15);
  CHECK(progress->batches == 3);
  CHECK(progress->loss_sum == doctest::Approx(done->loss_sum));
  CHECK(progress->positives == 6);
  auto rounds = request<std::uint64_t>(t, sync_atom::value);
  REQUIRE(rounds);
  CHECK(*rounds == 0); // algorithm none: the mock syncer ran no round

  auto report = request<trainer_report>(t, stop_atom::value, std::uint64_t{0});
  REQUIRE(report);
  CHECK(rec->count("syncer stop") == 1);
  CHECK(report->trainer == 3);
  CHECK(report->work == *done);
  REQUIRE(report->replica.size() == init.size());
  CHECK(report->replica.values != init); // three dense updates happened
  CHECK(rec->down.count("trainer") == 0);
  // The runtime's shutdown: exit to the trainer ends everything it spawned.
  self->send_exit(t, caf::exit_reason::user_shutdown);
  run();
  REQUIRE(rec->down.count("trainer") == 1);
  CHECK(sys.registry().running() == baseline);
}

TEST_CASE_FIXTURE(trainer_fixture, "trainer: FR workers sync every k batches through the syncer") {
  rec->batches = {mocks::make_batch(0), mocks::make_batch(1, 1), mocks::make_batch(2, 2)};
  auto t = spawn_trainer(1, model::sync_algorithm::fr_easgd, 2);
  auto done = request<worker_stats>(t, start_atom::value);
  REQUIRE(done);
  CHECK(done->batches == 3);
  CHECK(rec->count("sync request") == 1); // after batch 2 (k = 2); batch 3 is not a multiple
  auto rounds = request<std::uint64_t>(t, sync_atom::value);
  REQUIRE(rounds);
  CHECK(*rounds == 1);
  self->send_exit(t, caf::exit_reason::user_shutdown);
  run();
  CHECK(sys.registry().running() == baseline);
}

TEST_CASE_FIXTURE(trainer_fixture, "trainer: a dead shard fails start, naming the shard") {
  rec->manual_shards = true; // the lookups stay unanswered: training is in progress
  rec->batches = {mocks::make_batch(0)};
  auto t = spawn_trainer(1);
  auto start = request_async<worker_stats>(t, start_atom::value);
  run();
  CHECK_FALSE(start->done());
  REQUIRE(rec->lookups.size() == 2);
  self->send_exit(shards[1], caf::exit_reason::kill);
  run();
  REQUIRE(start->done());
  auto res = start->get();
  REQUIRE_FALSE(res);
  CHECK(code_of(res.error()) == errc::shard_down);
  CHECK(context_of(res.error()).find("embedding-shard-1") != std::string::npos);
  REQUIRE(rec->down.count("trainer") == 1);
  CHECK(code_of(rec->down["trainer"]) == errc::shard_down);
  // Its workers, reader and syncer went with it (minus the dead shard).
  CHECK(sys.registry().running() == baseline - 1);
}

TEST_CASE_FIXTURE(trainer_fixture, "trainer: a failing worker fails start with its error") {
  auto bad = mocks::make_batch(0);
  bad.dense.values.pop_back(); // 14 dense floats for 5 examples of 3
  rec->batches = {bad};
  auto t = spawn_trainer(1);
  auto res = request<worker_stats>(t, start_atom::value);
  REQUIRE_FALSE(res);
  CHECK(code_of(res.error()) == errc::input_error);
  CHECK(context_of(res.error()).find("trainer-3: worker-3-0 failed") != std::string::npos);
  REQUIRE(rec->down.count("trainer") == 1);
  CHECK(sys.registry().running() == baseline);
}

TEST_CASE_FIXTURE(trainer_fixture, "trainer: stop before the end of data ends the workers") {
  rec->manual_shards = true;
  rec->batches = {mocks::make_batch(0)};
  auto t = spawn_trainer(2);
  auto start = request_async<worker_stats>(t, start_atom::value);
  run();
  auto report = request<trainer_report>(t, stop_atom::value, std::uint64_t{0});
  REQUIRE(report);
  CHECK(report->work.batches == 0);
  REQUIRE(start->done());
  REQUIRE(start->get());
  CHECK(start->get()->batches == 0);
  CHECK(rec->down.count("trainer") == 0); // the stopped workers are no failure
  self->send_exit(t, caf::exit_reason::user_shutdown);
  run();
  CHECK(sys.registry().running() == baseline);
}

// Multi-node (actors/authority.hpp): only this process or the coordinator's
// node directs a trainer. A stop and a rebind from a trainer's node (another
// node of the job, not the coordinator's) are refused and change nothing.
TEST_CASE_FIXTURE(trainer_fixture, "trainer: a stop or rebind from a node that does not direct it is refused") {
  rec->manual_shards = true;
  rec->batches = {mocks::make_batch(0)};
  auto peer = test::make_foreign_peer(sys, test::other_node(0x51));
  auto t = spawn_trainer(1); // its authority: this process only
  auto start = request_async<worker_stats>(t, start_atom::value);
  run();
  caf::send_as(peer.handle, t, stop_atom::value, std::uint64_t{0});
  caf::send_as(peer.handle, t, rebind_atom::value, std::uint32_t{0},
               caf::actor_cast<caf::strong_actor_ptr>(peer.handle));
  run();
  REQUIRE(peer.replies->size() == 1); // the stop's refusal (a rebind has no reply)
  REQUIRE(peer.replies->at(0).match_elements<caf::error>());
  const auto why = messages::error_text(peer.replies->at(0).get_as<caf::error>(0));
  INFO(why);
  CHECK(why.find("trainer-3 refused stop from actor") != std::string::npos);
  CHECK_FALSE(start->done()); // still training
  CHECK(rec->down.count("trainer") == 0);
  auto report = request<trainer_report>(t, stop_atom::value, std::uint64_t{0}); // from here: obeyed
  REQUIRE(report);
  CHECK(start->done());
  self->send_exit(peer.sink, caf::exit_reason::user_shutdown);
  self->send_exit(t, caf::exit_reason::user_shutdown);
  run();
}

TEST_CASE_FIXTURE(trainer_fixture, "trainer: an exit during training answers start with an error") {
  rec->manual_shards = true;
  rec->batches = {mocks::make_batch(0)};
  auto t = spawn_trainer(1);
  auto start = request_async<worker_stats>(t, start_atom::value);
  run();
  self->send_exit(t, caf::exit_reason::user_shutdown);
  run();
  REQUIRE(start->done());
  REQUIRE_FALSE(start->get());
  CHECK(code_of(start->get().error()) == errc::trainer_down);
  CHECK(sys.registry().running() == baseline);
}

TEST_CASE_FIXTURE(test::actor_fixture, "trainer: a run with the real reader, syncer and shards") {
  // 40 Criteo lines (label, 13 integers, 26 hex categoricals) in a temp file.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ss_trainer_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "train.tsv").string();
  {
    std::ofstream out(file);
    for (int i = 0; i < 40; ++i) {
      out << (i % 3 == 0 ? 1 : 0);
      for (int j = 0; j < 13; ++j)
        out << '\t' << (i * 7 + j) % 20;
      for (int j = 0; j < 26; ++j)
        out << '\t' << std::hex << 0x1000 + (i * 31 + j * 17) % 50 << std::dec;
      out << '\n';
    }
  }
  model::arch a = mocks::small_arch();
  a.num_dense = 13; // the Criteo layout
  a.num_tables = 26;
  a.rows_per_table = 100;
  std::vector<actors::embedding_shard_actor> shards;
  for (std::uint32_t s = 0; s < 2; ++s) {
    actors::embedding_shard_config ec;
    ec.shard = s;
    ec.num_shards = 2;
    ec.num_tables = a.num_tables;
    ec.rows_per_table = a.rows_per_table;
    ec.dim = a.dim;
    shards.push_back(sys.spawn(actors::embedding_shard, ec));
  }
  run();
  const auto baseline = sys.registry().running();
  actors::trainer_config tc;
  tc.workers = 2;
  tc.arch = a;
  tc.initial_params.resize(model::dense_layout(a).size());
  model::init_dense(model::dense_layout(a), tc.initial_params.data(), 3);
  tc.reader.options.files = {file};
  tc.reader.batch_size = 8;
  tc.shards = shards;
  tc.syncer.algorithm = model::sync_algorithm::none;
  auto t = sys.spawn(actors::trainer, tc);
  auto done = request<worker_stats>(t, start_atom::value);
  REQUIRE(done);
  CHECK(done->examples == 40);
  CHECK(done->batches == 5); // 40 / 8
  CHECK(done->positives == 14); // i % 3 == 0 for i < 40
  CHECK(std::isfinite(done->loss_sum));
  auto report = request<trainer_report>(t, stop_atom::value, std::uint64_t{0});
  REQUIRE(report);
  CHECK(report->work == *done);
  CHECK(report->sync.rounds == 0);
  self->send_exit(t, caf::exit_reason::user_shutdown);
  run();
  CHECK(sys.registry().running() == baseline); // the trainer and all it spawned are gone
  for (auto& s : shards)
    self->send_exit(s, caf::exit_reason::user_shutdown);
  run();
  std::filesystem::remove_all(dir);
}
