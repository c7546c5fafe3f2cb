// Dynamic tables' files with an embedding shard's own admission sketches and
// counters (checkpoint/dynamic_files.hpp, dynamic_counters::own_shard): the
// rows load into tables of any shape, the shard's sketches go back only
// through `own`, never into the model's.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/store.hpp"
#include "model/shard_layout.hpp"
#include "tests/checkpoint/trust_fixture.hpp"

using namespace checkpoint;

namespace {

// Shard s of 2's tables: sketches sized by its share (100 of 200 rows), rows
// for 3 ids it owns in each table, each id counted once, 3 admissions.
model::dynamic_tables shard_tables(std::uint64_t s) {
  model::dynamic_settings d;
  d.max_rows = 100;
  d.admit_after = 2;
  model::dynamic_tables t(2, d, 3, 1, 7);
  for (std::size_t k = 0; k < 2; ++k) {
    std::size_t n = 0;
    for (std::uint64_t id = 1; n < 3; ++id) {
      if (model::id_owner(id, 2) != s)
        continue;
      const float w[3] = {float(id), float(k), float(s)}, st[1] = {1.0f};
      t.table(k).insert_row({id, id, 1}, w, st);
      t.table(k).sketch().add(id);
      ++n;
    }
    t.table(k).mutable_stats().admissions = 3;
    t.table(k).mutable_stats().lookups = 10 + s;
  }
  return t;
}

} // namespace

TEST_CASE("dynamic files: a shard's own sketches and counters come back through `own` only") {
  trust_test::trust_dir dir("own-sketch");
  std::string err, folder;
  folder_writer w;
  REQUIRE(w.begin(dir.str(), checkpoint_name(100), &err));
  std::vector<model::dynamic_tables> shards{shard_tables(0), shard_tables(1)};
  for (std::uint64_t s = 0; s < 2; ++s) {
    file_info info;
    REQUIRE(write_dynamic_file(w.path(dynamic_file_name(s)), shards[s], s, 2,
                               dynamic_counters::own_shard, &info, &err));
    w.add(info);
  }
  manifest m;
  m.mode = "simulated";
  m.examples = 100;
  REQUIRE_MESSAGE(w.commit(m, 1, &folder, &err), err);
  opened_checkpoint c;
  REQUIRE(!open_checkpoint(dir.str(), c));

  // The whole model's tables: another sketch width (256), which a
  // model-wide sketch of width 128 would be refused for.
  model::dynamic_settings whole;
  whole.max_rows = 200;
  whole.admit_after = 2;
  model::dynamic_tables t(2, whole, 3, 1, 7);
  std::vector<shard_counters> own;
  const auto e = load_dynamic_tables(c, t, &own);
  REQUIRE_MESSAGE(!e, *e);
  CHECK(t.table(0).rows() == 6);
  CHECK(t.table(1).rows() == 6);
  REQUIRE(t.table(0).sketch().width() == 256);
  CHECK(t.totals().admissions == 0); // the shards' counters are not the model's
  const auto& mine = t.table(0).sketch().counters();
  CHECK(std::all_of(mine.begin(), mine.end(), [](std::uint16_t q) { return q == 0; }));
  REQUIRE(own.size() == 2);
  for (const auto& k : own) {
    CAPTURE(k.shard);
    REQUIRE(k.shard < 2);
    const auto& from = shards[k.shard];
    CHECK(k.num_shards == 2);
    CHECK(k.width == 128);
    CHECK(k.width == from.table(0).sketch().width());
    CHECK(k.depth == from.table(0).sketch().depth());
    REQUIRE(k.stats.size() == 12);
    CHECK(k.stats[1] == 3);           // table 0's admissions
    CHECK(k.stats[6 + 4] == 10 + k.shard); // table 1's lookups
    std::vector<std::uint16_t> both = from.table(0).sketch().counters();
    const auto& c1 = from.table(1).sketch().counters();
    both.insert(both.end(), c1.begin(), c1.end());
    CHECK(k.sketch == both);
    CHECK(k.additions == std::vector<std::uint64_t>{3, 3});
  }
  // Without `own` (sequential mode, eval, predict) the rows load the same.
  model::dynamic_tables t2(2, whole, 3, 1, 7);
  REQUIRE(!load_dynamic_tables(c, t2));
  CHECK(t2.table(0).rows() == 6);

  // A crafted sketch width (no sketch has 33 columns) is refused by name
  // before any array is read.
  const auto path = c.file(dynamic_file_name(1));
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = bytes.find("sketch_width");
  REQUIRE(at != std::string::npos);
  const std::uint64_t crafted = 33;
  bytes.replace(at + 12, 8, reinterpret_cast<const char*>(&crafted), 8);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  model::dynamic_tables t3(2, whole, 3, 1, 7);
  std::vector<shard_counters> own3;
  const auto bad = load_dynamic_tables(c, t3, &own3);
  REQUIRE(bad);
  CHECK(bad->find("dynamic-1.bin': admission sketch 33 x 4, expected a width of 64") !=
        std::string::npos);
}
