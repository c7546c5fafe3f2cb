// model.embedding and embedding.*: the dynamic tables' settings, the default
// max-rows, and the refusals (dynamic outside sequential mode, embedding.*
// with hashed tables), each naming the options.
#include <doctest/doctest.h>

#include "tests/config/train_config_check.hpp"

namespace {

// The train_config of `args` in *out, or the error.
std::string parse(const std::vector<std::string>& args, runtime::train_config* out) {
  return test::train_config_error(args, *out);
}

} // namespace

TEST_CASE("model.embedding=dynamic: settings, max-rows from model.rows-per-table") {
  runtime::train_config c;
  REQUIRE(parse({"--cluster.mode=sequential"}, &c) == "");
  CHECK_FALSE(c.embedding.dynamic); // hashed by default
  REQUIRE(parse({"--cluster.mode=sequential", "--model.embedding=dynamic",
                 "--model.rows-per-table=5000", "--embedding.admit-after=3",
                 "--embedding.ttl=100"},
                &c) == "");
  CHECK(c.embedding.dynamic);
  CHECK(c.embedding.table.max_rows == 5000); // 0: model.rows-per-table
  CHECK(c.embedding.table.admit_after == 3);
  CHECK(c.embedding.table.ttl == 100);
  REQUIRE(parse({"--cluster.mode=sequential", "--model.embedding=dynamic",
                 "--embedding.max-rows=70"},
                &c) == "");
  CHECK(c.embedding.table.max_rows == 70);
}

TEST_CASE("dynamic tables outside sequential mode and embedding.* on hashed are refused") {
  runtime::train_config c;
  const auto sim = parse({"--model.embedding=dynamic"}, &c);
  CHECK(sim.find("model.embedding") != std::string::npos);
  CHECK(sim.find("cluster.mode") != std::string::npos);
  const auto ttl = parse({"--cluster.mode=sequential", "--embedding.ttl=5"}, &c);
  CHECK(ttl.find("embedding.ttl") != std::string::npos);
  CHECK(ttl.find("model.embedding=dynamic") != std::string::npos);
}
