// The checkpoint loaders. The first byte picks what the rest is:
//   even:        a manifest.json text, parsed with parse_manifest;
//   1 (mod 4):   the bytes of embedding-0.bin in an otherwise valid
//                checkpoint of a 3 x 10 x 4 model (the manifest lists its
//                true size and CRC32C, so the loader gets past the checksum
//                to the array file's parser);
//   3 (mod 4):   a structure (structured decoding, below): the bytes choose
//                the fields of well-formed files (headers, attributes, array
//                lengths, shard numbers, row lists) and the target writes
//                them with every length consistent: the header's arrays are
//                what the file holds, the manifest (or chain.json) lists the
//                files' true sizes and CRC32Cs. So byte mutations reach the
//                loaders' shape checks, not only their parsers (issue 40,
//                row 3: a well-formed file claiming more weights than the
//                tables). The next byte picks the folder: a model's
//                (even), a CPR shard's (1 mod 4), or dynamic tables'
//                (dynamic_folders.hpp): a checkpoint's dynamic-S.bin files
//                (3 mod 8) or a CPR shard's dynamic save (7 mod 8).
// Properties: nothing crashes, hangs or allocates without bound; every
// refusal names the folder; a structure whose every field is the model's own
// loads without error.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/cpr_files.hpp"
#include "checkpoint/crc32c.hpp"
#include "checkpoint/model_files.hpp"
#include "checkpoint/store.hpp"
#include "tests/fuzz/checkpoint_fields.hpp"
#include "tests/fuzz/dynamic_folders.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace fs = std::filesystem;
using namespace checkpoint;

namespace {

using fuzz_ckpt::fields;

// The process's scratch folder, removed at exit (libFuzzer and the replay
// both end through exit, which runs static destructors).
const std::string& folder() {
  struct scratch {
    std::string path =
      (fs::temp_directory_path() / ("ss-fuzz-ckpt-" + std::to_string(::getpid()))).string();
    scratch() { fs::create_directories(path); }
    ~scratch() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const scratch s;
  return s.path;
}

void write_bytes(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
}

// An array file with `h`'s arrays filled with a pattern; its size and CRC.
file_info write_file(const std::string& path, const file_header& h) {
  std::vector<std::vector<float>> arrays;
  std::vector<const float*> data;
  for (std::size_t i = 0; i < h.arrays.size(); ++i) {
    arrays.emplace_back(std::size_t(h.arrays[i].count));
    for (std::size_t j = 0; j < arrays.back().size(); ++j)
      arrays.back()[j] = float(j % 7) * 0.25f;
  }
  for (auto& a : arrays)
    data.push_back(a.data());
  file_info info;
  std::string err;
  FUZZ_CHECK(write_array_file(path, h, data, &info, &err));
  info.name = fs::path(path).filename().string();
  return info;
}

// A model folder: 1-3 embedding shard files and a replica, for a model of
// 3 tables x 10 rows x dim 4 with one optimiser value per row and 5 dense
// parameters; then loaded as eval and resume load it.
void model_folder(fields& in, const std::string& dir) {
  constexpr std::uint64_t tables = 3, rows = 10, dim = 4, spr = 1, dense = 5;
  const std::uint64_t shards = 1 + in.u8() % 3, lr = (rows + shards - 1) / shards;
  manifest m;
  m.mode = "sequential";
  m.readers = {reader_position{}};
  for (std::uint64_t s = 0; s < shards; ++s) {
    file_header h;
    h.kind = "embedding";
    const std::uint64_t t = in.value(tables), l = in.value(lr), d = in.value(dim);
    const std::uint64_t st = in.value(spr);
    h.attrs = {{"tables", t},          {"rows_per_table", in.value(rows)},
               {"dim", d},             {"state_per_row", st},
               {"shard", in.value(s)}, {"num_shards", in.value(shards)},
               {"local_rows", l}};
    // The file's own attributes give its lengths; the bytes may still claim
    // (and hold) another length.
    h.arrays = {{in.name("weights"), in.count(t * l * d)}, {in.name("state"), in.count(t * l * st)}};
    m.files.push_back(write_file(dir + "/" + embedding_file_name(s), h));
  }
  file_header r;
  r.kind = "replica";
  r.attrs = {{"trainer", 0}, {"size", dense}};
  r.arrays = {{in.name("params"), in.count(dense)}, {in.name("state"), in.count(dense)}};
  m.files.push_back(write_file(dir + "/" + replica_file_name(0), r));
  if (in.u8() >= 250) { // a manifest that disagrees with a file
    in.exact = false;
    m.files[0].crc32c ^= 1;
  }
  std::ofstream(dir + "/manifest.json", std::ios::trunc) << to_json(m);
  opened_checkpoint c;
  FUZZ_CHECK(!open_checkpoint(dir, c));
  model::embedding_tables tab(tables, rows, dim, spr);
  auto e = load_embeddings(c, tab);
  if (!e) {
    std::vector<replica_state> reps;
    e = load_replicas(c, dense, reps);
  }
  if (e)
    FUZZ_CHECK(e->find(dir) != std::string::npos);
  FUZZ_CHECK(!in.exact || !e);
}

// A CPR shard folder: a full save and up to two partial ones, chain.json
// listing them, for shard 0 of 1 with 2 tables x 4 rows x dim 2 (8 rows).
void cpr_folder(fields& in, const std::string& dir) {
  const cpr_shape shape{2, 4, 2, 1, 0, 1};
  const std::uint64_t saves = 1 + in.u8() % 3;
  nlohmann::json chain = {{"format", 1}, {"shard", 0}, {"num_shards", 1}, {"saves", nlohmann::json::array()}};
  for (std::uint64_t seq = 0; seq < saves; ++seq) {
    const bool full = seq == 0;
    std::vector<std::uint64_t> rows;
    if (!full) {
      const std::uint64_t n = 1 + in.u8() % 8;
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint8_t b = in.u8();
        rows.push_back(b < 248 ? b % 8 : b); // a row past the shard, now and then
        in.exact = in.exact && b < 248;
      }
    }
    const std::uint64_t n = full ? shape.rows() : rows.size();
    file_header h;
    h.kind = "cpr";
    h.attrs = {{"tables", in.value(2)},  {"local_rows", in.value(4)}, {"dim", in.value(2)},
               {"state_per_row", in.value(1)}, {"shard", in.value(0)},
               {"num_shards", in.value(1)},    {"seq", in.value(seq)},
               {"full", in.value(full ? 1 : 0)}};
    if (!full)
      h.arrays.push_back({in.name("rows"), 2 * in.count(n)});
    h.arrays.push_back({in.name("weights"), in.count(n * shape.dim)});
    h.arrays.push_back({in.name("state"), in.count(n * shape.state_per_row)});
    char name[32];
    std::snprintf(name, sizeof name, "%08llu.bin", static_cast<unsigned long long>(seq));
    auto info = write_file(dir + "/" + name, h);
    if (!full) { // the row list: uint64 words where the pattern went
      std::fstream f(dir + "/" + name, std::ios::in | std::ios::out | std::ios::binary);
      const auto at = std::streamoff(info.bytes) -
                      std::streamoff((h.arrays[0].count + h.arrays[1].count + h.arrays[2].count) * 4);
      f.seekp(at);
      std::vector<std::uint64_t> words(std::size_t(h.arrays[0].count / 2), 0);
      std::copy_n(rows.begin(), std::min(rows.size(), words.size()), words.begin());
      f.write(reinterpret_cast<const char*>(words.data()), std::streamsize(words.size() * 8));
      f.close();
      info.crc32c = fuzz_ckpt::info_of(dir + "/" + name).crc32c;
    }
    chain["saves"].push_back({{"seq", seq}, {"file", name}, {"full", full},
                              {"rows", n}, {"bytes", info.bytes}, {"crc32c", info.crc32c},
                              {"at_ns", 0}});
  }
  std::ofstream(dir + "/chain.json", std::ios::trunc) << chain.dump();
  std::vector<float> w(std::size_t(shape.rows() * shape.dim)), a(std::size_t(shape.rows()));
  cpr_loaded got;
  const auto e = load_cpr_chain(dir, shape, w.data(), a.data(), &got);
  if (e)
    FUZZ_CHECK(e->find(dir) != std::string::npos);
  FUZZ_CHECK(!in.exact || !e);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::uint8_t* body = data + 1;
  const std::size_t n = size - 1;
  if (data[0] % 2 == 0) {
    manifest m;
    const std::string text(reinterpret_cast<const char*>(body), n);
    if (auto e = parse_manifest(text, "fuzz/manifest.json", m))
      FUZZ_CHECK(e->find("fuzz/manifest.json") != std::string::npos);
    return 0;
  }
  const auto dir = folder();
  std::error_code ec; // a fresh folder: no file of the previous input stays
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (data[0] % 4 == 3) {
    fields in{body, n};
    const std::uint8_t which = in.u8();
    if (which % 2 == 0)
      model_folder(in, dir);
    else if (which % 4 == 1)
      cpr_folder(in, dir);
    else if (which % 8 == 3)
      fuzz_ckpt::dynamic_folder(in, dir);
    else
      fuzz_ckpt::cpr_dynamic_folder(in, dir);
    return 0;
  }
  const auto emb = dir + "/embedding-0.bin";
  write_bytes(emb, body, n);
  manifest m;
  m.mode = "sequential";
  m.readers = {reader_position{}};
  m.files = {{"embedding-0.bin", n, crc32c_extend(0, body, n)}};
  {
    std::ofstream f(dir + "/manifest.json", std::ios::trunc);
    f << to_json(m);
  }
  opened_checkpoint c;
  FUZZ_CHECK(!open_checkpoint(dir, c));
  model::embedding_tables t(3, 10, 4, 1);
  if (auto e = load_embeddings(c, t))
    FUZZ_CHECK(e->find(dir) != std::string::npos);
  return 0;
}
