// Derived defaults: train.batch-size=0, 128 per worker, and beyond 4
// trainers 4096 / trainers^2, 16 to 128; scheduler.max-throughput=-1, from
// the sync algorithm. A value that is set wins.
#include <doctest/doctest.h>

#include "config/train_config.hpp"

namespace {

runtime::train_config config_of(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::train_config c;
  REQUIRE_FALSE(o.parse(args));
  REQUIRE_FALSE(runtime::build_train_config(o, c));
  return c;
}

std::size_t batch_of(const std::vector<std::string>& args) {
  return config_of(args).train.batch_size;
}

std::size_t turn_of(const std::vector<std::string>& args) {
  return config_of(args).cluster.max_throughput;
}

} // namespace

TEST_CASE("the batch size is derived from the number of trainers unless set") {
  CHECK(batch_of({}) == 128); // 2 trainers
  CHECK(batch_of({"--cluster.mode=sequential"}) == 128);
  CHECK(batch_of({"--cluster.mode=sequential", "--cluster.trainers=16"}) == 128);
  CHECK(batch_of({"--cluster.trainers=1"}) == 128);
  CHECK(batch_of({"--cluster.trainers=4"}) == 128);
  CHECK(batch_of({"--cluster.trainers=5"}) == 128);
  CHECK(batch_of({"--cluster.trainers=6"}) == 113);
  CHECK(batch_of({"--cluster.trainers=8"}) == 64);
  CHECK(batch_of({"--cluster.trainers=12"}) == 28);
  CHECK(batch_of({"--cluster.trainers=16"}) == 16);
  CHECK(batch_of({"--cluster.trainers=64"}) == 16);
  CHECK(batch_of({"--cluster.trainers=16", "--train.batch-size=128"}) == 128);
  CHECK(batch_of({"--cluster.trainers=2", "--train.batch-size=7"}) == 7);
}

TEST_CASE("scheduler.max-throughput is derived from the sync algorithm unless set") {
  // One message a turn where no shadow syncer runs and a foreground ring's
  // hops wait behind a worker's turn; CAF's unbounded turn for the shadow
  // methods and FR-EASGD (docs/virtual-time.md, "The scheduler's turns").
  CHECK(turn_of({}) == 0); // s-easgd
  for (const char* a : {"none", "fr-ma", "fr-bmuf"}) {
    CAPTURE(a);
    CHECK(turn_of({std::string("--sync.algorithm=") + a}) == 1);
  }
  for (const char* a : {"s-easgd", "s-ma", "s-bmuf", "fr-easgd"}) {
    CAPTURE(a);
    CHECK(turn_of({std::string("--sync.algorithm=") + a}) == 0);
  }
  // One worker alone gains nothing from handing its thread on (1x1: 0.95x).
  CHECK(turn_of({"--sync.algorithm=none", "--cluster.trainers=1"}) == 0);
  CHECK(turn_of({"--sync.algorithm=none", "--cluster.trainers=1", "--cluster.workers=2"}) == 1);
  CHECK(turn_of({"--sync.algorithm=none", "--scheduler.max-throughput=0"}) == 0);
  CHECK(turn_of({"--sync.algorithm=s-ma", "--scheduler.max-throughput=1"}) == 1);
  CHECK(turn_of({"--sync.algorithm=fr-ma", "--scheduler.max-throughput=16"}) == 16);
}
