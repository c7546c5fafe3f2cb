// Shadow pacing (sync.min-gap-batches) on the virtual clock: a shadow round
// starts once its trainer has finished the gap's batches since the last one
// started, woken by the worker whose batch completes the gap. The syncer
// used to look again every 1 ms, so where a batch takes less than that the
// gap was the tick's, not the option's (16 trainers at a batch of 16: 2.65-2.92
// batches at a gap of 1; docs/RESULTS.md 4g).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/cluster/cluster_run.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace shadow_pacing_test {

namespace {

struct data_files : test::synthetic_train_file {
  data_files() : synthetic_train_file("pacing", 8000, 31) {}
};

runtime::run_metrics run(const data_files& d, const std::string& alg, int gap) {
  // 4 trainers of batches of 16: a batch takes about 0.34 virtual ms here.
  auto out = test::run_cluster(test::train_config_of(
    {"--data.train=" + d.train, "--data.eval=", "--cluster.mode=simulated", "--sim.clock=virtual",
     "--output.progress=none", "--model.rows-per-table=20000", "--cluster.trainers=4",
     "--train.batch-size=16", "--sync.algorithm=" + alg,
     "--sync.min-gap-batches=" + std::to_string(gap)}));
  REQUIRE(out.sim);
  return out;
}

} // namespace

TEST_CASE("shadow pacing: a round every sync.min-gap-batches batches, not every pacing tick") {
  data_files d;
  for (const char* alg : {"s-easgd", "s-ma", "s-bmuf"})
    for (int gap : {1, 4}) {
      CAPTURE(alg);
      CAPTURE(gap);
      const auto m = run(d, alg, gap);
      CHECK(m.examples == 8000);
      REQUIRE(m.sync.sync_gap_mean);
      REQUIRE(m.sync.sync_gap_p90);
      // The round takes less than a batch here, so the gap is the option's.
      // (1 ms ticks: 2.41-2.65 at a gap of 1 and 5.17-5.30 at 4, p90 4 and 7.)
      CHECK(*m.sync.sync_gap_mean >= gap);
      CHECK(*m.sync.sync_gap_mean <= gap + 0.1);
      CHECK(*m.sync.sync_gap_p90 <= gap + 1);
      // A round every gap batches of each trainer's 125, less two.
      CHECK(m.sync.rounds >= 4 * (125 / std::uint64_t(gap) - 2));
    }
}

} // namespace shadow_pacing_test
