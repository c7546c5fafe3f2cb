// A multi-node checkpoint cut on the embedding shard's side
// (actors/embedding_shard_cut.cpp): cut(N, "", W) keeps the cut's file in
// memory instead of writing it, the reply names it (bytes, CRC32C), and
// cut(N, offset) sends it in pieces as save(offset) sends a model file; a
// push after the alignment is not in it; another cut's id or a skipped
// offset is refused; the copy goes after the last piece.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "actors/embedding_shard.hpp"
#include "checkpoint/crc32c.hpp"
#include "checkpoint/model_files.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;

namespace {

actors::embedding_shard_state& cut_fetch_state(const actors::embedding_shard_actor& h) {
  using impl = std::remove_pointer_t<
    actors::embedding_shard_actor::stateful_pointer<actors::embedding_shard_state>>;
  return dynamic_cast<impl&>(*caf::actor_cast<caf::abstract_actor*>(h)).state;
}

std::string cut_fetch_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: a multi-node cut keeps its file in memory, fetched in pieces") {
  // Hashed, 3 tables x 160 000 rows of dim 16 over 3 shards: 53 334 local
  // rows a table, 3 * 53 334 * 17 * 4 = 10.9 MB: 3 pieces of at most 4 MiB.
  auto c = test::small_shard_config();
  c.num_tables = 3;
  c.rows_per_table = 160000;
  c.dim = 16;
  auto shard = sys.spawn(embedding_shard, c);
  run(); // (its tables are built when it starts)
  auto& st = cut_fetch_state(shard);
  REQUIRE(st.tables);
  // The file the cut must hold: the tables as they are now.
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / "ss_shard_cut_fetch_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  checkpoint::file_info want_info;
  std::string err;
  REQUIRE(checkpoint::write_embedding_file(
    dir.string(), checkpoint::shard_view(*st.tables, c.rows_per_table, c.shard, c.num_shards),
    &want_info, &err));
  const auto want = cut_fetch_bytes(dir / want_info.name);
  // Cut 1 over one worker, no folder: kept.
  auto cut = request_async<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1}, std::string{},
                                           std::uint32_t{1});
  run();
  sys.spawn([](caf::event_based_actor* self, decltype(shard) to) {
    self->send(to, cut_atom::value, std::uint64_t{1});
  }, shard);
  while (!(st.cut && st.cut->aligned) && run_once()) {
  }
  REQUIRE(st.writer);
  // A push after the alignment changes the tables, not the cut's file.
  embedding_grads g;
  g.keys.values = {model::row_key(0, 1)}; // row 1 of table 0: shard 1's first local row
  g.grads.values.assign(16, 1.0f);
  self->send(shard, push_atom::value, g);
  REQUIRE_FALSE(st.writer->finish()); // written, done(1) sent
  run();
  REQUIRE(cut->done());
  const auto f = cut->get();
  REQUIRE(f);
  CHECK(f->name == "embedding-1.bin");
  CHECK(f->bytes == want.size());
  CHECK(f->crc32c == want_info.crc32c);
  REQUIRE(st.kept_cut);
  // Another cut's file is refused; so is a skipped offset.
  auto other = request<file_chunk>(shard, cut_atom::value, std::uint64_t{2}, std::uint64_t{0});
  REQUIRE(!other);
  CHECK(context_of(other.error()).find("it keeps cut 1's file") != std::string::npos);
  std::string got;
  std::size_t pieces = 0;
  while (got.size() < want.size() && pieces < 100) {
    auto p = request<file_chunk>(shard, cut_atom::value, std::uint64_t{1}, std::uint64_t(got.size()));
    REQUIRE(p);
    CHECK(p->name == "embedding-1.bin");
    CHECK(p->offset == got.size());
    REQUIRE(p->bytes.size() > 0);
    CHECK(p->bytes.size() <= actors::embedding_shard_state::ship_piece_bytes);
    got.append(reinterpret_cast<const char*>(p->bytes.data()), p->bytes.size());
    CHECK(p->crc32c == checkpoint::crc32c_extend(0, got.data(), got.size()));
    ++pieces;
    if (pieces == 1) {
      auto skip = request<file_chunk>(shard, cut_atom::value, std::uint64_t{1}, std::uint64_t{5});
      REQUIRE(!skip);
      CHECK(context_of(skip.error()).find("expected " + std::to_string(got.size())) !=
            std::string::npos);
    }
  }
  CHECK(pieces == 3);
  CHECK(got == want); // the rows at the cut, not after the push
  CHECK_FALSE(st.kept_cut); // the copy went with the last piece
  auto after = request<file_chunk>(shard, cut_atom::value, std::uint64_t{1}, std::uint64_t{0});
  REQUIRE(!after);
  CHECK(context_of(after.error()).find("keeps no cut's file") != std::string::npos);
  fs::remove_all(dir);
}
