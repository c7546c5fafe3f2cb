// The row -> embedding-shard layout (model/shard_layout.hpp) against
// hand-dealt rows: 10 rows over 3 shards go 0,1,2,0,1,2,0,1,2,0.
#include <cstdint>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "model/shard_layout.hpp"

TEST_CASE("row keys: table in the high bits, row in the low 40") {
  const auto k = model::row_key(3, 17);
  CHECK(k == (std::uint64_t{3} << 40) + 17);
  CHECK(model::key_table(k) == 3);
  CHECK(model::key_row(k) == 17);
}

TEST_CASE("shard layout: ownership and local rows, 10 rows over 3 shards") {
  // Row r goes to shard r % 3 as its local row r / 3.
  const std::uint64_t owner[10] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0};
  const std::uint64_t local[10] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
  for (std::uint64_t r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(model::row_owner(r, 3) == owner[r]);
    CHECK(model::local_row(r, 3) == local[r]);
    // Any table: only the row decides the shard.
    CHECK(model::key_owner(model::row_key(5, r), 3) == owner[r]);
    CHECK(model::shard_local_key(model::row_key(5, r), 3) == model::row_key(5, local[r]));
  }
  // Shard 1 holds rows 1, 4, 7 as local rows 0, 1, 2.
  CHECK(model::global_row(0, 1, 3) == 1);
  CHECK(model::global_row(2, 1, 3) == 7);
  // ceil(10 / 3) = 4 local rows each; shard 0's fourth is row 9, shard 1's
  // and 2's (rows 10 and 11) are padding past the table.
  CHECK(model::local_rows(10, 3) == 4);
  CHECK(model::global_row(3, 0, 3) == 9);
  CHECK(model::global_row(3, 1, 3) == 10);
  CHECK(model::global_row(3, 2, 3) == 11);
  // E divides the table: 12 rows over 3 shards, 4 each, no padding.
  CHECK(model::local_rows(12, 3) == 4);
  // One shard holds every row as itself.
  CHECK(model::local_rows(10, 1) == 10);
  CHECK(model::row_owner(9, 1) == 0);
  CHECK(model::local_row(9, 1) == 9);
  CHECK(model::shard_local_key(model::row_key(2, 9), 1) == model::row_key(2, 9));
}

TEST_CASE("shard layout: global -> (owner, local) -> global, every row once") {
  const std::uint64_t big = std::uint64_t{1} << 39; // rows near the 40-bit limit
  // Shard counts and their padding rows for 100 rows, e * ceil(100 / e) - 100:
  // 1 * 100, 2 * 50, 3 * 34 = 102, 7 * 15 = 105, 16 * 7 = 112.
  const std::uint64_t counts[5][2] = {{1, 0}, {2, 0}, {3, 2}, {7, 5}, {16, 12}};
  for (const auto& c : counts) {
    const std::uint64_t e = c[0];
    CAPTURE(e);
    const std::uint64_t rows = 100;
    // Round trip of every row, and of rows near the limit.
    for (std::uint64_t r = 0; r < rows; ++r)
      CHECK(model::global_row(model::local_row(r, e), model::row_owner(r, e), e) == r);
    for (std::uint64_t r = big - 20; r < big; ++r)
      CHECK(model::global_row(model::local_row(r, e), model::row_owner(r, e), e) == r);
    // The shards' local rows, padding dropped, cover rows 0..99 exactly once.
    std::multiset<std::uint64_t> seen;
    std::uint64_t padding = 0;
    for (std::uint64_t s = 0; s < e; ++s)
      for (std::uint64_t l = 0; l < model::local_rows(rows, e); ++l) {
        const auto g = model::global_row(l, s, e);
        if (g >= rows) {
          ++padding;
          continue;
        }
        CHECK(model::row_owner(g, e) == s);
        CHECK(model::local_row(g, e) == l);
        seen.insert(g);
      }
    CHECK(seen.size() == rows);
    CHECK(std::set<std::uint64_t>(seen.begin(), seen.end()).size() == rows);
    CHECK(padding == c[1]);
  }
}
