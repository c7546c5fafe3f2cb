// embedding_shard's model file sent in pieces (save(offset) -> file_chunk, a
// multi-node export; actors/embedding_shard_export.cpp) under the
// deterministic scheduler: the pieces put together are the file save(FOLDER)
// writes, byte for byte, hashed and dynamic; each piece's CRC32C covers the
// file so far; an offset other than the next one is refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "actors/embedding_shard.hpp"
#include "checkpoint/crc32c.hpp"
#include "messages/peer_bounds.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/shard_save.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;

namespace {

using test::bytes_of;

// The shard's file as save(FOLDER) writes it, and as its pieces; the number
// of pieces in *pieces.
void check_pieces(test::actor_fixture& f, const actors::embedding_shard_actor& shard,
                  const std::string& name, std::size_t* pieces) {
  const auto dir = std::filesystem::temp_directory_path() / "ss_shard_export_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  REQUIRE(test::save(f, shard, dir.string()));
  const auto want = bytes_of(dir / name);
  std::filesystem::remove_all(dir);
  REQUIRE(want.size() > 16);
  std::string got;
  *pieces = 0;
  while (got.size() < want.size() && *pieces < 100) {
    auto c = f.request<file_chunk>(shard, save_atom::value, std::uint64_t(got.size()));
    REQUIRE(c);
    CHECK(c->name == name);
    CHECK(c->size == want.size());
    CHECK(c->offset == got.size());
    REQUIRE(c->bytes.size() > 0);
    CHECK(c->bytes.size() <= actors::embedding_shard_state::ship_piece_bytes);
    got.append(reinterpret_cast<const char*>(c->bytes.data()), c->bytes.size());
    CHECK(c->crc32c == checkpoint::crc32c_extend(0, got.data(), got.size()));
    ++*pieces;
  }
  CHECK(got == want);
  // The image is gone after the last piece: only offset 0 starts again.
  auto after = f.request<file_chunk>(shard, save_atom::value, std::uint64_t(got.size()));
  REQUIRE(!after);
  CHECK(test::actor_fixture::context_of(after.error()).find("expected 0") != std::string::npos);
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: its model file in pieces is the file save writes") {
  // Hashed, 2 tables x 80 000 rows of dim 16 over 3 shards: 26 667 local
  // rows a table, 2 * 26 667 * (16 + 1) floats = 3.6 MB, plus the header...
  auto c = test::small_shard_config();
  c.rows_per_table = 80000;
  c.dim = 16;
  std::size_t pieces = 0;
  auto shard = sys.spawn(embedding_shard, c);
  check_pieces(*this, shard, "embedding-1.bin", &pieces);
  CHECK(pieces == 1);
  // ... and with 3 tables of 160 000 rows, 3 * 53 334 * 17 * 4 = 10.9 MB: 3 pieces of 4 MiB.
  c.num_tables = 3;
  c.rows_per_table = 160000;
  auto big = sys.spawn(embedding_shard, c);
  check_pieces(*this, big, "embedding-1.bin", &pieces);
  CHECK(pieces == 3);
  // An offset other than the next piece's is refused, naming the one expected.
  auto first = request<file_chunk>(big, save_atom::value, std::uint64_t{0});
  REQUIRE(first);
  auto skip = request<file_chunk>(big, save_atom::value, std::uint64_t{5});
  REQUIRE(!skip);
  CHECK(context_of(skip.error()).find("expected " + std::to_string(first->bytes.size())) !=
        std::string::npos);
  // Dynamic tables: a copy of the rows by id, dynamic-1.bin.
  auto dyn = sys.spawn(embedding_shard, test::small_dynamic_shard_config());
  const auto mine = test::ids_owned(1, 2);
  for (int sight = 0; sight < 2; ++sight) // admitted at the second sight
    REQUIRE(request<embedding_rows>(dyn, lookup_atom::value,
                                    test::pair_lookup(1 + sight, {0, mine[0], 1, mine[1]})));
  check_pieces(*this, dyn, "dynamic-1.bin", &pieces);
  CHECK(pieces == 1);
}

TEST_CASE("check_file_chunk: the coordinator's checks of a piece before it writes it") {
  file_chunk c;
  c.name = "embedding-0.bin";
  c.size = 10;
  c.offset = 4;
  c.bytes.values.assign(6, 1); // bytes 4..9 of 10: the last piece
  CHECK(check_file_chunk(c, "embedding-0.bin", 4, 10) == "");
  CHECK(check_file_chunk(c, "embedding-0.bin", 4, 0) == ""); // (the first piece's size is taken)
  CHECK(check_file_chunk(c, "embedding-1.bin", 4, 10).find("expected 'embedding-1.bin'") != std::string::npos);
  CHECK(check_file_chunk(c, "embedding-0.bin", 0, 10) == "a piece at offset 4, expected 0");
  CHECK(check_file_chunk(c, "embedding-0.bin", 4, 12) ==
        "a file of 10 bytes, earlier pieces said 12");
  c.bytes.values.push_back(1); // 7 bytes from 4: past the end
  CHECK(check_file_chunk(c, "embedding-0.bin", 4, 10) ==
        "a piece of 7 bytes at offset 4 of a file of 10 bytes");
  c.offset = c.size = std::uint64_t(-1); // no overflow at 2^64 - 1
  CHECK(check_file_chunk(c, "embedding-0.bin", c.offset, c.size) != "");
  c.bytes.values.clear();
  CHECK(check_file_chunk(c, "embedding-0.bin", c.offset, c.size).find("an empty piece") == 0);
}
