// Full recovery of the simulated cluster (recovery.mode=full;
// cluster/full_recovery.hpp): a lost embedding shard rolls every role back
// to the newest cut, the examples since are redone, every example ends up
// trained once, and on the virtual clock the run replays to the byte.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "cluster/full_recovery.hpp"
#include "model/dlrm.hpp"
#include "tests/cluster/cluster_run.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace full_recovery_test {

namespace {

struct data_files : test::synthetic_train_file {
  data_files() : synthetic_train_file("full-recovery", 8000, 34) {}
};

std::vector<std::string> cluster(const data_files& d) {
  return {"--data.train=" + d.train, "--cluster.mode=simulated", "--sim.clock=virtual",
          "--output.progress=none", "--model.rows-per-table=20000", "--cluster.trainers=2",
          "--cluster.embedding-shards=2"};
}

std::vector<std::string> base(const data_files& d) {
  auto cmd = cluster(d);
  cmd.push_back("--recovery.mode=full");
  cmd.push_back("--checkpoint.dir=" + (d.dir / "ckpt").string());
  return cmd;
}

} // namespace

TEST_CASE("full recovery: a killed shard rolls the cluster back to its newest cut") {
  data_files d;
  const auto cmd = test::with(base(d), {"--cpr.interval=0.02", "--faults.kill=[embedding-shard-1@0.5]"});
  const auto cfg = test::train_config_of(cmd);
  CHECK(cfg.checkpoint.every_seconds == doctest::Approx(0.02)); // the cuts' interval
  const auto a = test::run_cluster(cfg);
  CHECK(a.examples == 8000); // each example trained once in the end, none twice
  REQUIRE(a.recovery);
  const auto& r = *a.recovery;
  CHECK(r.mode == "full");
  CHECK(r.failures == 1);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].find("embedding shard 1 is down") == 0);
  CHECK(r.events[0].find("rolled back to " + (d.dir / "ckpt").string() + "/ckpt-") !=
        std::string::npos);
  CHECK(r.loads == 1);
  CHECK(r.load_bytes > 0);
  CHECK(r.load_seconds > 0);
  CHECK(r.saves >= 2);
  CHECK(r.bytes > 0);
  // The redone examples: those since the newest cut, fewer than at the kill.
  CHECK(r.redone_examples > 0);
  CHECK(r.redone_examples < 8000 / 2);
  CHECK(r.lost_examples == 0); // nothing is lost: it is redone
  CHECK(r.pls == 0);
  REQUIRE(a.sim);
  // The job's time holds the failed attempt's time: beyond a failure-free run.
  const auto clean = test::run_cluster(test::train_config_of(cluster(d)));
  CHECK(a.seconds > clean.seconds);
  CHECK(runtime::to_json(test::run_cluster(cfg)) == runtime::to_json(a));
}

// A multi-node coordinator's rollback (deploy/node_coordinator.cpp) takes
// the cut's counts and dense state, not its embedding files: each node reads
// its own part when it starts again. A cut whose table file has bytes
// flipped (its size kept): the rollback that reads the tables refuses it,
// naming the file; the one without them takes the cut's examples and holds
// no rows.
TEST_CASE("full recovery: a rollback without the tables reads none of the cut's table files") {
  data_files d;
  const auto cfg = test::train_config_of(test::with(base(d), {"--cpr.interval=0.02"}));
  REQUIRE(test::run_cluster(cfg).examples == 8000);
  // The newest cut inside the pass (ckpt-N, N < 8000; the end's is done).
  std::filesystem::path cut;
  std::uint64_t examples = 0;
  for (const auto& f : std::filesystem::directory_iterator(d.dir / "ckpt")) {
    const auto name = f.path().filename().string();
    if (name.size() != 17 || name.rfind("ckpt-", 0) != 0)
      continue;
    const std::uint64_t n = std::stoull(name.substr(5));
    if (n < 8000 && n >= examples) {
      examples = n;
      cut = f.path();
    }
  }
  REQUIRE(examples > 0);
  const auto table = cut / "embedding-0.bin";
  REQUIRE(std::filesystem::exists(table));
  { // bytes flipped in the middle: the size stays, the file's checksum fails
    std::fstream f(table, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(std::filesystem::file_size(table) / 2));
    const char junk[16] = {'\x5a', '\x5a', '\x5a', '\x5a', '\x5a', '\x5a', '\x5a', '\x5a',
                           '\x5a', '\x5a', '\x5a', '\x5a', '\x5a', '\x5a', '\x5a', '\x5a'};
    f.write(junk, sizeof junk);
    REQUIRE(f.good());
  }

  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  caf::scoped_actor self{sys};
  const model::dlrm net(cfg.arch);
  const runtime::cluster_handles none; // (the roles are already down)
  const runtime::shard_loss loss{0, "embedding shard 0 is down", 1.0, 7000};
  runtime::full_recovery fr(self.ptr(), cfg, nullptr);
  fr.attempt_began();
  std::optional<runtime::cluster_start> start;
  runtime::resume_base at;
  const auto refused = fr.roll_back(loss, none, net, cut.string(), start, at, true);
  REQUIRE(refused);
  CHECK(refused->find("embedding-0.bin") != std::string::npos);
  const auto counts = fr.roll_back(loss, none, net, cut.string(), start, at, false);
  REQUIRE_MESSAGE(!counts, counts.value_or(""));
  REQUIRE(start);
  CHECK(at.examples == examples);
  CHECK(start->tables == nullptr);
  CHECK(start->dynamic == nullptr);
  CHECK(!start->params.empty());
}

TEST_CASE("full recovery: a failure before any cut starts over from the initial model") {
  data_files d;
  const auto a = test::run_cluster(test::train_config_of(
    test::with(base(d), {"--cpr.interval=1000", "--faults.kill=[embedding-shard-0@0.5]"})));
  REQUIRE(a.recovery);
  CHECK(a.examples == 8000);
  CHECK(a.recovery->saves == 0);
  CHECK(a.recovery->loads == 0);
  REQUIRE(a.recovery->events.size() == 1);
  CHECK(a.recovery->events[0].find("the initial model (no cut yet)") != std::string::npos);
  // All the examples trained before the kill are redone: half of them, a
  // little more (the kill comes at the first 10 ms poll past half).
  CHECK(a.recovery->redone_examples >= 4000);
  CHECK(a.recovery->redone_examples <= 8000 * 0.65);
}

TEST_CASE("full recovery: drawn failures replay, and the interval is Young/Daly's") {
  data_files d;
  const auto cmd = test::with(base(d), {"--faults.mtbf=4", "--faults.time-scale=0.01",
                                  "--checkpoint.storage-gbps=5"});
  const auto cfg = test::train_config_of(cmd);
  // Until a cut is measured: C = a shard's rows and optimiser state over the
  // store's bandwidth; T = sqrt(2 C MTBF), the MTBF scaled: 4 s x 0.01.
  const double shard_bytes = 26.0 * 20000 * (16 + 1) * 4 / 2;
  CHECK(cfg.recovery.save_estimate_seconds == doctest::Approx(shard_bytes / 5e9));
  CHECK(cfg.checkpoint.every_seconds == doctest::Approx(std::sqrt(2 * shard_bytes / 5e9 * 0.04)));
  const auto a = test::run_cluster(cfg);
  REQUIRE(a.recovery);
  CHECK(a.recovery->failures >= 1);
  CHECK(a.examples == 8000);
  // Retuned from the cuts measured: C is each cut's whole length (the
  // workers' drain and the copy too), longer than the store's time alone.
  CHECK(a.recovery->interval_seconds > cfg.checkpoint.every_seconds);
  CHECK(runtime::to_json(test::run_cluster(cfg)) == runtime::to_json(a));
}

TEST_CASE("full recovery: the options say what they need") {
  const auto build = test::config_error;
  CHECK(build({"--recovery.mode=full"}).find("the cluster's cuts go there") != std::string::npos);
  CHECK(build({"--recovery.mode=full", "--checkpoint.dir=/tmp/x"}).find("Young/Daly") !=
        std::string::npos);
  CHECK(build({"--recovery.mode=full", "--checkpoint.dir=/tmp/x", "--cpr.interval=1",
               "--cluster.mode=sequential"})
          .find("cluster.mode=simulated") != std::string::npos);
  // Cuts by examples are the interval too.
  CHECK(build({"--recovery.mode=full", "--checkpoint.dir=/tmp/x",
               "--checkpoint.every-examples=1000"}) == "");
}

} // namespace full_recovery_test
