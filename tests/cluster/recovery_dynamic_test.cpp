// Partial recovery with dynamic embedding tables (model.embedding=dynamic,
// recovery.mode=partial; checkpoint/cpr_dynamic.hpp) in the simulated
// cluster on the virtual clock: a killed shard restarts from its own chain
// of saves of ids and rows, every example is trained, and the model
// evaluates as well as the run without the kill.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/cluster/cluster_run.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace recovery_dynamic_test {

namespace {

struct data_files : test::synthetic_train_file {
  data_files() : synthetic_train_file("cpr-dynamic", 8000, 33) {
    eval = (dir / "eval.tsv").string();
    data::synthetic_options so;
    so.rows = 2000;
    so.seed = 34;
    std::string err;
    data::generate_result gr;
    REQUIRE_MESSAGE(data::generate_synthetic(so, eval, &gr, &err), err);
  }
  std::string eval;
};

std::vector<std::string> base(const data_files& d) {
  return {"--data.train=" + d.train, "--data.eval=" + d.eval, "--cluster.mode=simulated",
          "--sim.clock=virtual", "--output.progress=none", "--model.rows-per-table=20000",
          "--model.embedding=dynamic", "--cluster.trainers=2", "--cluster.embedding-shards=2",
          "--recovery.mode=partial", "--checkpoint.dir=" + (d.dir / "ckpt").string(),
          "--cpr.interval=0.005", "--cpr.policy=mfu", "--cpr.fraction=0.25"};
}

} // namespace

TEST_CASE("partial recovery, dynamic tables: a killed shard restarts from its saved ids and "
          "rows, and the model evaluates as without the kill") {
  data_files d;
  const auto calm = test::run_cluster(test::train_config_of(base(d)));
  const auto cmd = test::with(base(d), {"--faults.kill=[embedding-shard-1@0.5]"});
  const auto a = test::run_cluster(test::train_config_of(cmd));
  CHECK(a.examples == 8000); // nobody stopped: every example trained
  REQUIRE(a.recovery);
  const auto& r = *a.recovery;
  CHECK(r.failures == 1);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].find("embedding shard 1 lost at") == 0);
  CHECK(r.events[0].find("restarted from its save of") != std::string::npos);
  CHECK(r.full_saves >= 1);
  CHECK(r.full_saves < r.saves); // mfu: partial saves between the full ones
  CHECK(r.loads == 1);
  CHECK(r.load_bytes > 0);
  CHECK(r.lost_examples > 0);
  CHECK(r.lost_examples < 8000.0 / 2); // a save came before the failure
  // The restarted shard holds rows again and serves them: the tables are
  // not empty at the end, and the model is as good as the calm run's.
  REQUIRE(a.embedding);
  REQUIRE(calm.embedding);
  CHECK(a.embedding->rows.size() == 26);
  CHECK(a.embedding->rows[0] > 0);
  REQUIRE(a.eval);
  REQUIRE(calm.eval);
  CHECK(std::isfinite(a.eval->ne));
  CHECK(a.eval->ne < 1.0);
  CHECK(a.eval->ne == doctest::Approx(calm.eval->ne).epsilon(0.01));
  MESSAGE("eval NE " << a.eval->ne << " with the kill, " << calm.eval->ne << " without; PLS "
                     << r.pls << ", " << r.saves << " saves");
  // The virtual clock replays the run to the byte.
  CHECK(runtime::to_json(test::run_cluster(test::train_config_of(cmd))) == runtime::to_json(a));
}

} // namespace recovery_dynamic_test
