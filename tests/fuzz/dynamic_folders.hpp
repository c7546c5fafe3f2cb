#pragma once
// The checkpoint fuzz target's dynamic-table folders (checkpoint_fuzz.cpp):
// real files written from a small dynamic model whose ids, shard count and
// counters the input chooses, then patched byte by byte where the input
// says, with the manifest (or chain.json) listing the patched files' true
// sizes and CRC32Cs, so the patches reach the loaders' shape checks.
// Properties: nothing crashes, hangs or allocates without bound; a refusal
// names the folder; an unpatched folder loads without error and gives back
// every table's ids.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/cpr_dynamic.hpp"
#include "checkpoint/crc32c.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/store.hpp"
#include "model/dynamic_tables.hpp"
#include "tests/fuzz/checkpoint_fields.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace fuzz_ckpt {

// 2 tables of at most 16 rows, dim 4, one optimiser value per row.
inline model::dynamic_tables small_dynamic_model() {
  model::dynamic_settings s;
  s.max_rows = 16;
  return model::dynamic_tables(2, s, 4, 1, 7);
}

// Admits up to 40 ids the input names (a full table evicts), at rising times.
inline void admit(fields& in, model::dynamic_tables& t) {
  const unsigned n = in.u8() % 41;
  for (unsigned i = 0; i < n; ++i) {
    const std::uint8_t b = in.u8();
    t.table(b % 2).train_lookup(std::uint64_t(b) * 0x9E3779B97F4A7C15ull, i);
  }
}

// Up to 3 patches (offset, xor) of the file at `path`; true when one changed a byte.
inline bool patch(fields& in, const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const auto size = std::uint64_t(f.tellg());
  bool changed = false;
  for (unsigned k = in.u8() % 4; k > 0 && size > 0; --k) {
    const std::uint64_t at = (std::uint64_t(in.u8()) | std::uint64_t(in.u8()) << 8 |
                              std::uint64_t(in.u8()) << 16) % size;
    const std::uint8_t x = in.u8();
    if (x == 0)
      continue;
    char c = 0;
    f.seekg(std::streamoff(at));
    f.get(c);
    f.seekp(std::streamoff(at));
    f.put(char(c ^ char(x)));
    changed = true;
  }
  return changed;
}

inline checkpoint::file_info info_of(const std::string& path) {
  std::ifstream g(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  checkpoint::file_info info;
  info.name = std::filesystem::path(path).filename().string();
  info.bytes = bytes.size();
  info.crc32c = checkpoint::crc32c_extend(0, bytes.data(), bytes.size());
  return info;
}

inline bool same_ids(const model::dynamic_tables& a, const model::dynamic_tables& b) {
  for (std::size_t i = 0; i < a.num_tables(); ++i) {
    const auto x = a.table(i).saved_rows(), y = b.table(i).saved_rows();
    if (x.size() != y.size())
      return false;
    for (std::size_t j = 0; j < x.size(); ++j)
      if (x[j].id != y[j].id)
        return false;
  }
  return true;
}

// A checkpoint of dynamic tables: 1-3 files dynamic-S.bin with the rows,
// the model's counters or each shard's own, loaded by load_dynamic_tables.
inline void dynamic_folder(fields& in, const std::string& dir) {
  auto t = small_dynamic_model();
  admit(in, t);
  const std::uint64_t shards = 1 + in.u8() % 3;
  const std::uint8_t kind = in.u8() % 3;
  const auto counters = kind == 0   ? checkpoint::dynamic_counters::none
                        : kind == 1 ? checkpoint::dynamic_counters::model
                                    : checkpoint::dynamic_counters::own_shard;
  checkpoint::manifest m;
  m.mode = "sequential";
  m.readers = {checkpoint::reader_position{}};
  for (std::uint64_t s = 0; s < shards; ++s) {
    const auto path = dir + "/" + checkpoint::dynamic_file_name(s);
    checkpoint::file_info info;
    std::string err;
    const auto c = counters == checkpoint::dynamic_counters::model && s > 0
                     ? checkpoint::dynamic_counters::none
                     : counters;
    FUZZ_CHECK(checkpoint::write_dynamic_file(path, t, s, shards, c, &info, &err));
    if (patch(in, path))
      in.exact = false;
    m.files.push_back(info_of(path));
  }
  std::ofstream(dir + "/manifest.json", std::ios::trunc) << checkpoint::to_json(m);
  checkpoint::opened_checkpoint oc;
  FUZZ_CHECK(!checkpoint::open_checkpoint(dir, oc));
  auto back = small_dynamic_model();
  std::vector<checkpoint::shard_counters> own;
  const auto e = checkpoint::load_dynamic_tables(oc, back, &own);
  if (e)
    FUZZ_CHECK(e->find(dir) != std::string::npos);
  FUZZ_CHECK(!in.exact || !e);
  if (in.exact)
    FUZZ_CHECK(same_ids(t, back));
}

// A CPR shard folder of dynamic tables: one full save (shard 0 of 1),
// chain.json listing it; loaded by load_cpr_dynamic_chain.
inline void cpr_dynamic_folder(fields& in, const std::string& dir) {
  auto t = small_dynamic_model();
  admit(in, t);
  const checkpoint::cpr_shape shape{2, 16, 4, 1, 0, 1};
  checkpoint::cpr_dynamic_rows rows;
  FUZZ_CHECK(!checkpoint::gather_cpr_dynamic(shape, t, nullptr, in.u8(), &rows));
  checkpoint::cpr_save_info info;
  std::string err;
  FUZZ_CHECK(checkpoint::write_cpr_dynamic(dir, shape, 0, 0, rows, &info, &err));
  const auto path = dir + "/" + info.file;
  if (patch(in, path)) {
    in.exact = false;
    const auto now = info_of(path);
    auto chain = nlohmann::json::parse(std::ifstream(dir + "/chain.json"));
    chain["saves"][0]["bytes"] = now.bytes;
    chain["saves"][0]["crc32c"] = now.crc32c;
    std::ofstream(dir + "/chain.json", std::ios::trunc) << chain.dump();
  }
  auto back = small_dynamic_model();
  std::uint64_t served = 0;
  checkpoint::cpr_loaded got;
  const auto e = checkpoint::load_cpr_dynamic_chain(dir, shape, back, &served, &got);
  if (e)
    FUZZ_CHECK(e->find(dir) != std::string::npos);
  FUZZ_CHECK(!in.exact || !e);
  if (in.exact)
    FUZZ_CHECK(same_ids(t, back));
}

} // namespace fuzz_ckpt
