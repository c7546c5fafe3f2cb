// model::count_min_sketch and model::dynamic_table (dynamic embedding
// tables, DESIGN.md section 16): the sketch's bounds, admission after
// admit-after occurrences, eviction of the least used rows and by ttl, the
// zero read and no update of an id without a row, and a checkpoint's rows.
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "model/count_min_sketch.hpp"
#include "model/dynamic_tables.hpp"

using model::dynamic_table;

TEST_CASE("count_min_sketch never under-counts and halves") {
  model::count_min_sketch s(256, 4);
  CHECK(s.width() == 256);
  // 500 ids into 256 x 4 counters: collisions are certain, under-counts are
  // not. 1500 additions, below the 10 x 256 that halve the counters.
  for (std::uint64_t id = 0; id < 500; ++id)
    for (std::uint64_t k = 0; k <= id % 5; ++k)
      s.add(id);
  std::size_t exact = 0;
  for (std::uint64_t id = 0; id < 500; ++id) {
    CHECK(s.estimate(id) >= id % 5 + 1);
    exact += s.estimate(id) == id % 5 + 1;
  }
  CHECK(exact > 250); // conservative update keeps most estimates exact
  CHECK(s.additions() == 1500);
  // Width 64: the 640th addition halves every counter.
  model::count_min_sketch t(50, 2); // rounded up to 64
  CHECK(t.width() == 64);
  CHECK(t.add(7) == 1);
  CHECK(t.add(7) == 2);
  for (int k = 2; k < 640; ++k)
    t.add(7);
  CHECK(t.estimate(7) == 320);
  CHECK(t.additions() == 0);
  t.halve();
  CHECK(t.estimate(7) == 160);
}

TEST_CASE("dynamic_table admits an id at its admit-after-th occurrence") {
  model::dynamic_settings s;
  s.admit_after = 3;
  s.max_rows = 10;
  dynamic_table t(s, 4, 1, 1, 0);
  CHECK(t.train_lookup(42, 0) == dynamic_table::no_row);
  CHECK(t.train_lookup(42, 1) == dynamic_table::no_row);
  CHECK(t.find(42) == dynamic_table::no_row);
  const auto slot = t.train_lookup(42, 2);
  REQUIRE(slot != dynamic_table::no_row);
  CHECK(t.find(42) == slot);
  CHECK(t.rows() == 1);
  CHECK(t.stats().admissions == 1);
  CHECK(t.stats().lookups == 3);
  CHECK(t.stats().missing == 2);
  // Values in +-sqrt(1/10) from (seed, table, id) alone; the state is zero.
  dynamic_table u(s, 4, 1, 1, 0);
  for (int k = 0; k < 3; ++k)
    u.train_lookup(42, 5);
  for (int k = 0; k < 4; ++k) {
    CHECK(std::abs(t.row(slot)[k]) <= 0.3163f); // sqrt(0.1) = 0.3162
    CHECK(t.row(slot)[k] == u.row(u.find(42))[k]);
  }
  CHECK(*t.accumulator(slot) == 0.0f);
  dynamic_table other_table(s, 4, 1, 1, 1);
  for (int k = 0; k < 3; ++k)
    other_table.train_lookup(42, 0);
  CHECK(other_table.row(0)[0] != t.row(slot)[0]);
}

TEST_CASE("a full dynamic_table evicts its least used rows, never this batch's") {
  model::dynamic_settings s;
  s.max_rows = 64; // evicts 64 / 32 = 2 rows at a time
  dynamic_table t(s, 2, 0, 1, 0);
  for (std::uint64_t id = 0; id < 64; ++id) // ids 0..63 at step 0, id i used i more times
    for (std::uint64_t k = 0; k <= id; ++k)
      t.train_lookup(id, 0);
  CHECK(t.rows() == 64);
  CHECK(t.train_lookup(1000, 1) != dynamic_table::no_row);
  // Ids 0 and 1 (used once and twice) made room.
  CHECK(t.stats().evictions == 2);
  CHECK(t.find(0) == dynamic_table::no_row);
  CHECK(t.find(1) == dynamic_table::no_row);
  CHECK(t.find(2) != dynamic_table::no_row);
  CHECK(t.rows() == 63);
  // A batch (now = 2) that uses every row cannot evict: the new id reads zeros.
  dynamic_table full(s, 2, 0, 1, 0);
  for (std::uint64_t id = 0; id < 64; ++id)
    full.train_lookup(id, 2);
  CHECK(full.train_lookup(999, 2) == dynamic_table::no_row);
  CHECK(full.stats().missing == 1);
  CHECK(full.stats().evictions == 0);
}

TEST_CASE("dynamic_table expires rows unseen for ttl examples") {
  model::dynamic_settings s;
  s.max_rows = 100;
  s.ttl = 80; // sweeps every 10 examples
  dynamic_table t(s, 2, 1, 1, 0);
  t.expire(0);
  t.train_lookup(1, 0);
  t.train_lookup(2, 0);
  t.expire(50); // sweeps (due at 10): nothing unseen for more than 80
  t.train_lookup(2, 50);
  t.expire(70); // a sweep (due at 60): id 1 unseen for 70 <= 80 examples stays
  CHECK(t.rows() == 2);
  t.expire(90); // id 1 unseen for 90 > 80 examples
  CHECK(t.find(1) == dynamic_table::no_row);
  CHECK(t.find(2) != dynamic_table::no_row);
  CHECK(t.stats().evictions == 1);
  CHECK(t.stats().expired == 1);
}

TEST_CASE("dynamic_tables: an id without a row reads zeros and gets no update") {
  model::dynamic_settings s;
  s.admit_after = 2;
  s.max_rows = 8;
  model::dynamic_tables tabs(2, s, 3, 1, 7);
  model::batch_lookup b;
  model::sparse_optimizer sgd;
  sgd.kind = model::sparse_optimizer_kind::sgd;
  sgd.lr = 0.5f;
  const std::vector<float> g(2 * 3, 1.0f); // a gradient of 1 for every entry
  // One example, two tables, id 5 in both: first sight, no rows.
  const std::uint64_t first[2] = {5, 5};
  tabs.train_lookup(b, first, 1, 0);
  REQUIRE(b.index.unique().size() == 2); // one missing key per table
  for (const float v : b.unique_rows)
    CHECK(v == 0.0f);
  tabs.apply(b.index, g.data(), sgd); // nothing to update
  CHECK(tabs.table(0).rows() == 0);
  // Id 5 again in table 0 (admitted), id 6 in table 1 (first sight).
  const std::uint64_t second[2] = {5, 6};
  tabs.train_lookup(b, second, 1, 1);
  REQUIRE(b.index.unique().size() == 2);
  const auto slot = tabs.table(0).find(5);
  REQUIRE(slot != dynamic_table::no_row);
  const float before = tabs.table(0).row(slot)[0];
  CHECK(b.unique_rows[0] == before);
  CHECK(b.unique_rows[3] == 0.0f);
  tabs.apply(b.index, g.data(), sgd);
  CHECK(tabs.table(0).row(slot)[0] == before - 0.5f); // sgd: w -= 0.5 * 1
  CHECK(tabs.table(1).rows() == 0);
  // Evaluation counts lookups and misses and admits nothing.
  std::uint64_t lookups = 0, missing = 0;
  const std::uint64_t third[2] = {5, 7};
  tabs.find(b, third, 1, nullptr, &lookups, &missing);
  CHECK(lookups == 2);
  CHECK(missing == 1);
  CHECK(b.unique_rows[0] == before - 0.5f);
  CHECK(tabs.totals().admissions == 1);
  CHECK(tabs.totals().missing == 3); // training: 5, 5, then 6
}
