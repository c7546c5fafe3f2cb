// model.embedding and embedding.*: the dynamic tables' settings, the default
// max-rows, and the refusals (what the simulated cluster's and multi-node
// runs' dynamic tables do not have yet, embedding.* with hashed tables), each
// naming the options.
#include <doctest/doctest.h>

#include "config/deploy_config.hpp"
#include "tests/config/train_config_check.hpp"

using test::parse;

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

TEST_CASE("dynamic tables in the simulated cluster and multi-node; what has none yet is refused") {
  runtime::train_config c;
  REQUIRE(parse({"--model.embedding=dynamic", "--cluster.embedding-shards=3"}, &c) == "");
  CHECK(c.embedding.dynamic); // the simulated cluster: each shard its ids
  // Partial recovery: the shards' CPR saves hold their ids with the rows.
  CHECK(parse({"--model.embedding=dynamic", "--recovery.mode=partial", "--checkpoint.dir=x",
               "--cpr.interval=1"},
              &c) == "");
  // Multi-node runs build the same shards on their nodes
  // (cluster/cluster_plan.cpp): dynamic tables are no longer refused there.
  CHECK(c.embedding.dynamic);
  CHECK(runtime::refuse_in_multi_node(c).value_or("") == "");
  // Checkpoint cuts: each shard writes its dynamic file when the cut aligns;
  // full recovery rolls back to them.
  CHECK(parse({"--model.embedding=dynamic", "--checkpoint.every-examples=100",
               "--checkpoint.dir=x"},
              &c) == "");
  CHECK(c.checkpoint.every_examples == 100);
  CHECK(parse({"--model.embedding=dynamic", "--recovery.mode=full", "--checkpoint.dir=x",
               "--checkpoint.every-seconds=1"},
              &c) == "");
  CHECK(c.recovery.full);
  // DCT: dct.mp's replies carry row marks (model/dct_mp_dynamic.hpp); dct.dp
  // is the dense sync.
  CHECK(parse({"--model.embedding=dynamic", "--dct.mp=true", "--dct.dp=true"}, &c) == "");
  CHECK(c.dct.mp);
  CHECK(c.dct.dp);
  // Each refusal names model.embedding and the other option.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--cluster.local-rows=true"},
        {"--embedding.max-rows=2", "--cluster.embedding-shards=3"}}) {
    auto all = args;
    all.push_back("--model.embedding=dynamic");
    const auto e = parse(all, &c);
    CAPTURE(args.front());
    CHECK(e.find("model.embedding") != std::string::npos);
    CHECK(e.find(args.front().substr(2, args.front().find('=') - 2)) != std::string::npos);
  }
  const auto ttl = parse({"--cluster.mode=sequential", "--embedding.ttl=5"}, &c);
  CHECK(ttl.find("embedding.ttl") != std::string::npos);
  CHECK(ttl.find("model.embedding=dynamic") != std::string::npos);
}
