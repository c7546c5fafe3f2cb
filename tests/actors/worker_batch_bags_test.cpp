// worker_batch on a multi-hot batch: every id of every bag is keyed by its
// field's table, each unique key goes to its shard once, the model input
// carries the bag offsets, and bad offsets are refused by validate().
#include <doctest/doctest.h>

#include <set>

#include "actors/worker_batch.hpp"
#include "model/shard_layout.hpp"

namespace {

model::arch two_tables() {
  model::arch a;
  a.num_dense = 1;
  a.num_tables = 2;
  a.dim = 2;
  a.rows_per_table = 1000;
  return a;
}

// 2 examples x 2 tables (fields e0t0, e0t1, e1t0, e1t1): {5, 7, 5}, {}, {7},
// {9, 5}: unique keys t0:5, t0:7, t1:9, t1:5 (id 5 is two rows, one per table).
messages::example_batch bags() {
  messages::example_batch b;
  b.num_dense = 1;
  b.num_cat = 2;
  b.labels.values = {1, 0};
  b.dense.values = {0.5f, 1.5f};
  b.cat.values = {5, 7, 5, 7, 9, 5};
  b.cat_offsets.values = {0, 3, 3, 4, 6};
  return b;
}

} // namespace

TEST_CASE("worker_batch: a multi-hot batch looks up each unique id once and pools its bags") {
  const auto a = two_tables();
  auto b = bags();
  REQUIRE(actors::worker_batch::validate(b, a).empty());
  actors::worker_batch w;
  w.prepare(0, std::move(b), a, 2);
  CHECK(w.num_unique() == 4);
  std::set<std::uint64_t> keys;
  std::vector<std::uint64_t> k;
  for (std::size_t s = 0; s < 2; ++s) {
    w.shard_keys(s, k);
    for (auto key : k) {
      CHECK(model::key_owner(key, 2) == s);
      keys.insert(key);
    }
  }
  CHECK(keys == std::set<std::uint64_t>{model::row_key(0, 5), model::row_key(0, 7),
                                        model::row_key(1, 9), model::row_key(1, 5)});
  const auto in = w.input();
  REQUIRE(in.offsets != nullptr);
  CHECK(in.offsets[4] == 6);
  CHECK(in.index[0] == in.index[2]); // id 5 twice in the first bag: one row
  CHECK(in.index[1] == in.index[3]); // id 7 in two bags of table 0: one row
  CHECK(in.index[0] != in.index[5]); // id 5 in tables 0 and 1: two rows
}

TEST_CASE("worker_batch: validate refuses bag offsets that do not fit the batch") {
  const auto a = two_tables();
  auto b = bags();
  b.cat_offsets.values = {0, 3, 3, 4};
  CHECK(actors::worker_batch::validate(b, a).find("bag offsets") != std::string::npos);
  b = bags();
  b.cat_offsets.values = {0, 3, 2, 4, 6};
  CHECK(actors::worker_batch::validate(b, a).find("decrease") != std::string::npos);
  b = bags();
  b.cat_offsets.values = {0, 3, 3, 4, 7};
  CHECK(!actors::worker_batch::validate(b, a).empty());
}
