// Full recovery of the simulated cluster (recovery.mode=full;
// cluster/full_recovery.hpp): a lost embedding shard rolls every role back
// to the newest cut, the examples since are redone, every example ends up
// trained once, and on the virtual clock the run replays to the byte.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

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
