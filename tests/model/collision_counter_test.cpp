// model::collision_counter: the share of lookups of hashed rows that serve
// more than one id, counted by hand on a table of 4 rows.
#include <doctest/doctest.h>

#include <vector>

#include "model/collision_counter.hpp"
#include "model/shard_layout.hpp"

TEST_CASE("collision_counter: shared rows and the share of their lookups") {
  model::collision_counter c(2, 4); // 2 tables x 4 rows
  using model::row_key;
  // Table 0 row 1 serves ids 10 and 20 (shared); row 2 serves id 30 three
  // times (not shared); table 1 row 1 serves id 10 alone (another table:
  // not shared with table 0's row 1).
  const std::vector<std::uint64_t> keys{row_key(0, 1), row_key(0, 2), row_key(0, 2),
                                        row_key(1, 1), row_key(0, 1), row_key(0, 2)};
  const std::vector<std::uint64_t> ids{10, 30, 30, 10, 20, 30};
  c.add(keys.data(), ids.data(), keys.size());
  auto t = c.count();
  CHECK(t.lookups == 6);
  CHECK(t.used_rows == 3);
  CHECK(t.shared_rows == 1);
  CHECK(t.shared_lookups == 2); // both lookups of table 0 row 1, the earlier one included
  // A third id on row 2 makes its 3 earlier lookups and this one shared.
  const std::uint64_t k = row_key(0, 2), id = 40;
  c.add(&k, &id, 1);
  t = c.count();
  CHECK(t.lookups == 7);
  CHECK(t.shared_rows == 2);
  CHECK(t.shared_lookups == 6);
}
