// train.batch-size=0 (the default): 128 per worker, and beyond 4 trainers
// 512 / trainers, at least 32; a batch size that is set wins.
#include <doctest/doctest.h>

#include "config/train_config.hpp"

namespace {

std::size_t batch_of(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::train_config c;
  REQUIRE_FALSE(o.parse(args));
  REQUIRE_FALSE(runtime::build_train_config(o, c));
  return c.train.batch_size;
}

} // namespace

TEST_CASE("the batch size is derived from the number of trainers unless set") {
  CHECK(batch_of({}) == 128); // 2 trainers
  CHECK(batch_of({"--cluster.mode=sequential"}) == 128);
  CHECK(batch_of({"--cluster.mode=sequential", "--cluster.trainers=16"}) == 128);
  CHECK(batch_of({"--cluster.trainers=1"}) == 128);
  CHECK(batch_of({"--cluster.trainers=4"}) == 128);
  CHECK(batch_of({"--cluster.trainers=5"}) == 102);
  CHECK(batch_of({"--cluster.trainers=8"}) == 64);
  CHECK(batch_of({"--cluster.trainers=16"}) == 32);
  CHECK(batch_of({"--cluster.trainers=64"}) == 32);
  CHECK(batch_of({"--cluster.trainers=16", "--train.batch-size=128"}) == 128);
  CHECK(batch_of({"--cluster.trainers=2", "--train.batch-size=7"}) == 7);
}
