// DCT on the dense sync (dct.dp) in the simulated cluster on the virtual
// clock: the dct metrics are computed from what crossed, the compressed run
// replays to the byte, it moves fewer bytes than dense EASGD, and the
// options refuse what is not built.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/runtime/cluster_run.hpp"

namespace {

struct data_files : test::synthetic_train_file {
  data_files() : synthetic_train_file("dct", 8000, 41) {}
};

std::vector<std::string> base(const data_files& d) {
  return {"--data.train=" + d.train, "--cluster.mode=simulated", "--sim.clock=virtual",
          "--output.progress=none", "--model.rows-per-table=20000", "--cluster.trainers=2",
          "--sync.algorithm=s-easgd"};
}

} // namespace

TEST_CASE("dct: compressed EASGD in the cluster counts its bytes and replays") {
  data_files d;
  const auto dense = test::run_cluster(test::train_config_of(base(d)));
  CHECK_FALSE(dense.dct);
  const auto cmd = test::with(base(d), {"--dct.dp=true", "--dct.dp-keep=0.01", "--dct.refresh=5"});
  const auto a = test::run_cluster(test::train_config_of(cmd));
  CHECK(a.examples == 8000);
  REQUIRE(a.dct);
  const auto& x = *a.dct;
  CHECK(x.rounds == a.sync.rounds);
  CHECK(x.rounds > 4);
  CHECK(x.bytes == a.sync.bytes + a.sync.bytes_received);
  // Dense EASGD would move 4 bytes per entry each way every round.
  const double per_round_dense = double(dense.sync.bytes + dense.sync.bytes_received) /
                                 double(dense.sync.rounds);
  CHECK(double(x.dense_bytes) / double(x.rounds) == doctest::Approx(per_round_dense));
  CHECK(x.reduction() > 3.0);
  // Above the keep of 0.01: a threshold held for 5 rounds lets more through
  // while d grows (the replicas drift from the centre early in training).
  CHECK(x.sent_fraction < 0.5);
  CHECK(x.reply_fraction < 0.2);
  CHECK(x.refreshes > 0);
  CHECK(runtime::to_json(test::run_cluster(test::train_config_of(cmd))) == runtime::to_json(a));
}

TEST_CASE("dct: the options say what is built") {
  const auto build = test::config_error;
  CHECK(build({"--cluster.mode=simulated", "--dct.dp=true"}) == "");
  CHECK(build({"--cluster.mode=simulated", "--sync.algorithm=s-ma", "--dct.dp=true"})
          .find("s-easgd and fr-easgd, not s-ma") != std::string::npos);
  CHECK(build({"--cluster.mode=sequential", "--dct.dp=true"}).find("not sequential") !=
        std::string::npos);
  CHECK(build({"--dct.dp-keep=0"}).find("dct.dp-keep") != std::string::npos);
  CHECK(build({"--dct.refresh=0"}).find("dct.refresh") != std::string::npos);
}
