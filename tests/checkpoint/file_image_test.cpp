// checkpoint/file_image.hpp: an image's bytes are the file the writer writes
// (what a multi-node export relies on: the coordinator writes a shard's file
// from the image's pieces), read whole or in pieces across the header's and
// the arrays' boundaries.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "checkpoint/background_writer.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/file_image.hpp"
#include "checkpoint/model_files.hpp"

namespace fs = std::filesystem;
using namespace checkpoint;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The image against the file at `path`: size, whole, in pieces of 7 bytes
// (every boundary crossed somewhere), and the last byte alone.
void check_image(const file_image& img, const std::string& path) {
  const auto want = file_bytes(path);
  REQUIRE(want.size() > 16);
  REQUIRE(img.size() == want.size());
  CHECK(img.name() == fs::path(path).filename().string());
  std::string got(want.size(), '\0');
  img.read(0, got.data(), got.size());
  CHECK(got == want);
  std::string pieces;
  for (std::uint64_t off = 0; off < img.size(); off += 7) {
    char buf[7];
    const auto n = std::size_t(std::min<std::uint64_t>(7, img.size() - off));
    img.read(off, buf, n);
    pieces.append(buf, n);
  }
  CHECK(pieces == want);
  char last = 0;
  img.read(img.size() - 1, &last, 1);
  CHECK(last == want.back());
}

} // namespace

TEST_CASE("file image: an embedding shard's file, byte for byte, from the tables' own arrays") {
  const auto dir = fs::temp_directory_path() / ("ss-image-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  model::embedding_tables t(3, 5, 4, 1); // shard 1 of 2 of tables of 10 rows: 5 local rows
  for (std::size_t i = 0; i < t.weights().size(); ++i)
    t.weights()[i] = float(i) * 0.25f - 3.0f;
  for (std::size_t i = 0; i < t.accumulators().size(); ++i)
    t.accumulators()[i] = float(i);
  const auto v = shard_view(t, 10, 1, 2);
  file_info info;
  std::string err;
  REQUIRE(write_embedding_file(dir.string(), v, &info, &err));
  CHECK(info.name == "embedding-1.bin");
  check_image(embedding_image(v), (dir / info.name).string());
  fs::remove_all(dir);
}

TEST_CASE("file image: a dynamic shard's file, with and without the counters") {
  const auto dir = fs::temp_directory_path() / ("ss-image-dyn-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  model::dynamic_settings s;
  s.max_rows = 64;
  model::dynamic_tables t(2, s, 3, 1, 7);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::uint64_t id = 1; id <= 20; ++id) { // ids over both shards of 2
      const float w[3] = {float(id), float(k), -1.0f}, st[1] = {0.5f * float(id)};
      t.table(k).insert_row({id * 1000003 + k, id, std::uint32_t(id % 5)}, w, st);
    }
  t.table(1).mutable_stats().admissions = 77;
  std::uint64_t added = 999999937; // ids inserted after an image was taken
  for (auto counters :
       {dynamic_counters::none, dynamic_counters::model, dynamic_counters::own_shard})
    for (std::uint64_t shard : {0, 1}) {
      CAPTURE(counters);
      CAPTURE(shard);
      const auto path = (dir / dynamic_file_name(shard)).string();
      file_info info;
      std::string err;
      REQUIRE(write_dynamic_file(path, t, shard, 2, counters, &info, &err));
      const auto img = dynamic_image(t, shard, 2, counters);
      check_image(img, path);
      // The image owns its copy of the rows: a later change is not in it.
      std::string before(img.size(), '\0');
      img.read(0, before.data(), before.size());
      const float w[3] = {9, 9, 9}, st[1] = {9};
      t.table(0).insert_row({added++, 1, 1}, w, st);
      std::string after(img.size(), '\0');
      img.read(0, after.data(), after.size());
      CHECK(after == before);
    }
  fs::remove_all(dir);
}

TEST_CASE("file image: a shard's cut kept as an image (to_image) is the file of the rows at the "
          "cut while pushes go on, with its size and CRC32C") {
  const auto dir = fs::temp_directory_path() / ("ss-image-cut-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Shard 1 of 2 of 3 tables of 8192 rows (4096 local rows each: 12 chunks
  // of 1024 rows), dim 4, one state float a row.
  model::embedding_tables t(3, 4096, 4, 1);
  for (std::size_t i = 0; i < t.weights().size(); ++i)
    t.weights()[i] = float(i % 997) * 0.5f;
  for (std::size_t i = 0; i < t.accumulators().size(); ++i)
    t.accumulators()[i] = float(i);
  const auto at_cut = t;
  background_writer::job j;
  j.to_image = true; // no folder: kept as an image
  j.full_rows_per_table = 8192;
  j.shard = 1;
  j.num_shards = 2;
  background_writer w(std::move(j), t);
  std::vector<std::uint64_t> keys;
  for (std::uint64_t round = 0; round < 200 || !w.done(); ++round) { // changes race the writer
    keys.clear();
    for (std::uint64_t k = 0; k < 32; ++k)
      keys.push_back(model::row_key((round + k) % 3, (round * 97 + k * 331) % 4096));
    w.before_update(keys);
    for (auto key : keys) {
      t.row(key)[0] += 1.0f;
      *t.accumulator(key) += 1.0f;
    }
  }
  REQUIRE_FALSE(w.finish());
  CHECK(t.weights() != at_cut.weights()); // the live tables moved on
  CHECK(fs::is_empty(dir));               // nothing written
  const auto img = w.take_image();
  file_info info;
  std::string err;
  REQUIRE(write_embedding_file(dir.string(), shard_view(at_cut, 8192, 1, 2), &info, &err));
  check_image(img, (dir / info.name).string());
  CHECK(w.file().name == info.name);
  CHECK(w.file().bytes == info.bytes);
  CHECK(w.file().crc32c == info.crc32c);
  CHECK(img.crc32c() == info.crc32c);
  fs::remove_all(dir);
}
