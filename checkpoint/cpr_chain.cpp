#include "checkpoint/cpr_chain.hpp"

#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "data/json_fields.hpp"

#include "checkpoint/file_io.hpp"

namespace checkpoint {

namespace {

using nlohmann::json;
using data::json_field;

constexpr int chain_format = 1;

json to_json(const cpr_save_info& s) {
  return {{"seq", s.seq},       {"file", s.file},     {"full", s.full},  {"rows", s.rows},
          {"bytes", s.bytes},   {"crc32c", s.crc32c}, {"at_ns", s.at_ns}};
}

} // namespace

std::string save_name(std::uint64_t seq) {
  char b[32];
  std::snprintf(b, sizeof b, "%08llu.bin", static_cast<unsigned long long>(seq));
  return b;
}

bool read_chain(const std::string& folder, const cpr_shape& shape,
                std::vector<cpr_save_info>& out, std::string* err) {
  const auto path = folder + "/chain.json";
  std::string text;
  if (!read_text_file(path, &text, err))
    return false;
  try {
    const auto j = json::parse(text);
    if (json_field<int>(j, "format") != chain_format)
      throw std::runtime_error("format " + j.at("format").dump() + ", expected " +
                               std::to_string(chain_format));
    if (json_field<std::uint64_t>(j, "shard") != shape.shard ||
        json_field<std::uint64_t>(j, "num_shards") != shape.num_shards)
      throw std::runtime_error("it is shard " + j.at("shard").dump() + " of " +
                               j.at("num_shards").dump() + ", expected shard " +
                               std::to_string(shape.shard) + " of " +
                               std::to_string(shape.num_shards));
    out.clear();
    for (const auto& e : j.at("saves")) {
      cpr_save_info s;
      s.seq = json_field<std::uint64_t>(e, "seq");
      s.file = json_field<std::string>(e, "file");
      s.full = json_field<bool>(e, "full");
      s.rows = json_field<std::uint64_t>(e, "rows");
      s.bytes = json_field<std::uint64_t>(e, "bytes");
      s.crc32c = json_field<std::uint32_t>(e, "crc32c");
      s.at_ns = json_field<std::int64_t>(e, "at_ns");
      if (s.file != save_name(s.seq))
        throw std::runtime_error("save " + std::to_string(s.seq) + " names file '" + s.file +
                                 "', expected '" + save_name(s.seq) + "'");
      out.push_back(std::move(s));
    }
    if (out.empty() || !out.front().full)
      throw std::runtime_error("the chain does not begin with a full save");
  } catch (const std::exception& e) {
    if (err)
      *err = "'" + path + "': " + e.what();
    return false;
  }
  return true;
}

bool write_chain(const std::string& folder, const cpr_shape& shape,
                 const std::vector<cpr_save_info>& saves, std::string* err) {
  json j = {{"format", chain_format}, {"shard", shape.shard}, {"num_shards", shape.num_shards},
            {"saves", json::array()}};
  for (const auto& s : saves)
    j["saves"].push_back(to_json(s));
  return write_file_atomic(folder + "/chain.json", j.dump(1) + "\n", err);
}

} // namespace checkpoint
