// Trust (issue 40) row 3: the loaders compare every array's length with what
// the model (or the CPR shard) needs before a row is placed. A well-formed
// file that claims and holds more weights than the tables is refused,
// naming the file, the array and both lengths (it used to be written past
// the tables: a segfault in eval).
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/cpr_files.hpp"
#include "checkpoint/model_files.hpp"
#include "checkpoint/store.hpp"

#include "tests/checkpoint/trust_fixture.hpp"

namespace fs = std::filesystem;
using namespace checkpoint;
using trust_test::trust_dir;

namespace {

// A checkpoint of a 3 x 10 x 4 model (one optimiser value per row) whose
// embedding-0.bin has the model's attributes but arrays of `weights` and
// `state` floats: well-formed, and the manifest lists its true size and CRC.
std::string write_oversized(const std::string& dir, std::uint64_t weights, std::uint64_t state) {
  folder_writer w;
  std::string err, folder;
  REQUIRE(w.begin(dir, checkpoint_name(7), &err));
  file_header h;
  h.kind = "embedding";
  h.attrs = {{"tables", 3}, {"rows_per_table", 10}, {"dim", 4}, {"state_per_row", 1},
             {"shard", 0},  {"num_shards", 1},      {"local_rows", 10}};
  h.arrays = {{"weights", weights}, {"state", state}};
  std::vector<float> wv(weights, 0.25f), sv(state, 1.0f);
  file_info info;
  info.name = embedding_file_name(0);
  REQUIRE(write_array_file(w.path(info.name), h, {wv.data(), sv.data()}, &info, &err));
  w.add(info);
  std::vector<float> dense(5, 0.5f);
  REQUIRE(write_replica(w, 0, dense.data(), dense.data(), dense.size(), &err));
  manifest m;
  m.mode = "sequential";
  m.readers = {reader_position{}};
  REQUIRE_MESSAGE(w.commit(m, 3, &folder, &err), err);
  return folder;
}

} // namespace

TEST_CASE("trust row 3: an embedding file holding more weights than the tables is refused") {
  trust_dir d("row3");
  // 3 tables x 10 rows x dim 4 = 120 weights and 30 state values; the file
  // holds twice as many of each (the attributes still say 3 x 10).
  write_oversized(d.str(), 240, 60);
  opened_checkpoint c;
  REQUIRE(!open_checkpoint(d.str(), c));
  model::embedding_tables t(3, 10, 4, 1);
  const auto e = load_embeddings(c, t);
  REQUIRE(e);
  CHECK(e->find("embedding-0.bin") != std::string::npos);
  CHECK(e->find("weights") != std::string::npos);
  CHECK(e->find("240") != std::string::npos);
  CHECK(e->find("120") != std::string::npos); // what the model needs
}

TEST_CASE("trust row 3: an embedding file whose state array is too long is refused") {
  trust_dir d("row3s");
  write_oversized(d.str(), 120, 31); // weights right, one state value too many
  opened_checkpoint c;
  REQUIRE(!open_checkpoint(d.str(), c));
  model::embedding_tables t(3, 10, 4, 1);
  const auto e = load_embeddings(c, t);
  REQUIRE(e);
  CHECK(e->find("embedding-0.bin") != std::string::npos);
  CHECK(e->find("state") != std::string::npos);
  CHECK(e->find("30") != std::string::npos);
}

TEST_CASE("trust row 3: a CPR full save whose state array is too long is refused") {
  trust_dir d("row3cpr");
  const cpr_shape shape{2, 4, 2, 1, 0, 1}; // 8 rows of dim 2, one state value each
  // A full save, well-formed, whose "state" holds 800 floats instead of 8.
  file_header h;
  h.kind = "cpr";
  h.attrs = {{"tables", 2}, {"local_rows", 4}, {"dim", 2}, {"state_per_row", 1},
             {"shard", 0},  {"num_shards", 1}, {"seq", 0}, {"full", 1}};
  h.arrays = {{"weights", 16}, {"state", 800}};
  std::vector<float> wv(16, 1.0f), sv(800, 2.0f);
  file_info info;
  std::string err;
  REQUIRE(write_array_file(d.str() + "/00000000.bin", h, {wv.data(), sv.data()}, &info, &err));
  nlohmann::json chain = {
    {"format", 1}, {"shard", 0}, {"num_shards", 1},
    {"saves", {{{"seq", 0}, {"file", "00000000.bin"}, {"full", true}, {"rows", 8},
                {"bytes", info.bytes}, {"crc32c", info.crc32c}, {"at_ns", 0}}}}};
  std::ofstream(d.str() + "/chain.json") << chain.dump();
  std::vector<float> w(16, 0.0f), a(8, 0.0f);
  cpr_loaded got;
  const auto e = load_cpr_chain(d.str(), shape, w.data(), a.data(), &got);
  REQUIRE(e);
  CHECK(e->find("00000000.bin") != std::string::npos);
  CHECK(e->find("state") != std::string::npos);
}
