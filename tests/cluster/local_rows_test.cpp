// cluster.local-rows in the simulated cluster on the wall clock: one worker
// trains exactly as through lookups and pushes (the same reads and updates in
// the same order), nothing crosses, two Hogwild workers train every example;
// and the options it cannot run with are refused, naming them.
#include <doctest/doctest.h>

#include <cmath>
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/cluster_run.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace local_rows_test {

namespace {

struct data_files : test::synthetic_train_file {
  data_files() : synthetic_train_file("local-rows", 20000, 17) {}
};

// The run's options; `mode` and `clock` are the ones a refusal test changes.
std::vector<std::string> base(const data_files& d, const std::string& mode = "simulated",
                              const std::string& clock = "wall") {
  return {"--data.train=" + d.train, "--cluster.mode=" + mode, "--sim.clock=" + clock,
          "--output.progress=none", "--model.rows-per-table=20000", "--cluster.trainers=1",
          "--sync.algorithm=none", "--train.batch-size=64"};
}

} // namespace

TEST_CASE("local rows: one worker trains as through messages, and nothing crosses") {
  data_files d;
  const auto msgs = test::run_cluster(test::train_config_of(base(d)));
  const auto local =
    test::run_cluster(test::train_config_of(test::with(base(d), {"--cluster.local-rows=true"})));
  CHECK(local.examples == 20000);
  CHECK(msgs.examples == 20000);
  CHECK(local.train_ne == msgs.train_ne); // bit for bit
  CHECK(msgs.bytes.lookup > 0);
  CHECK(msgs.bytes.push > 0);
  CHECK(local.bytes.lookup == 0);
  CHECK(local.bytes.push == 0);
  // The workers' own accounting (metrics `workers`): every batch counted
  // (20000 / 64 = 312.5), no more thread moves than batches, and the dense
  // step is a part of the batches' CPU time.
  REQUIRE(local.workers);
  CHECK(local.workers->batches == 313);
  CHECK(local.workers->thread_moves <= local.workers->batches);
  CHECK(local.workers->dense_step_cpu_seconds > 0);
  CHECK(local.workers->dense_step_cpu_seconds < local.workers->cpu_seconds);
  // Without scheduler.max-threads the cluster runs one scheduler thread per
  // core, not CAF 0.17's max(cores, 4).
  CHECK(local.workers->scheduler_threads == std::max(1u, std::thread::hardware_concurrency()));
}

TEST_CASE("local rows: two Hogwild workers on two threads train every example") {
  data_files d;
  const auto on = test::with(base(d), {"--cluster.local-rows=true", "--cluster.embedding-shards=3",
                                       "--scheduler.max-threads=2"});
  const auto one = test::run_cluster(test::train_config_of(on));
  const auto two = test::run_cluster(test::train_config_of(test::with(on, {"--cluster.workers=2"})));
  CHECK(two.examples == 20000);
  REQUIRE(two.workers);
  CHECK(two.workers->scheduler_threads == 2);
  // It learns (one worker: 0.957; two, seen: 0.962-0.964, through messages
  // 0.959-0.973; with the rows' updates dropped: 0.996 and 0.998).
  INFO("train NE: one worker " << one.train_ne << ", two " << two.train_ne);
  CHECK(one.train_ne < 0.97);
  CHECK(two.train_ne < 0.99);
}

TEST_CASE("local rows: the options it cannot run with are refused") {
  data_files d;
  auto refused = [&](const std::vector<std::string>& cmd, std::initializer_list<std::string> more,
                     const std::string& needs) {
    const auto e =
      test::config_error(test::with(test::with(cmd, {"--cluster.local-rows=true"}), more));
    INFO(e);
    CHECK(e.find("cluster.local-rows") != std::string::npos);
    CHECK(e.find(needs) != std::string::npos);
  };
  refused(base(d, "simulated", "virtual"), {}, "sim.clock=wall");
  refused(base(d, "sequential"), {}, "cluster.mode=simulated");
  refused(base(d), {"--net.enabled=true"}, "net.enabled=false");
  refused(base(d), {"--dct.mp=true"}, "dct.mp=false");
  refused(base(d), {"--checkpoint.dir=/tmp/x", "--checkpoint.every-examples=1000"},
          "checkpoint.every");
  refused(base(d), {"--faults.kill=[trainer-0@0.5]"}, "faults");
  CHECK(test::config_error(test::with(base(d), {"--cluster.local-rows=true"})).empty());
}

} // namespace local_rows_test
