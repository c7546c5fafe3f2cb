#include "checkpoint/manifest.hpp"

#include <nlohmann/json.hpp>

#include "data/json_fields.hpp"

namespace checkpoint {

using nlohmann::json;
using data::json_field;

std::string to_json(const manifest& m) {
  json j;
  j["format"] = "shadowsync-checkpoint";
  j["version"] = m.version;
  j["config"] = m.config_ini;
  j["mode"] = m.mode;
  j["examples"] = m.examples;
  j["readers"] = json::array();
  for (const auto& r : m.readers)
    j["readers"].push_back({{"part", r.part},         {"parts", r.parts},
                            {"epoch", r.epoch},       {"examples", r.examples},
                            {"lines", r.lines},       {"malformed", r.malformed},
                            {"served", r.served},     {"cut_bags", r.cut_bags}});
  j["rng"] = {{"model_seed", m.model_seed}};
  j["metrics"] = {{"loss_sum", m.counters.loss_sum},   {"prob_sum", m.counters.prob_sum},
                  {"positives", m.counters.positives}, {"malformed", m.counters.malformed},
                  {"cut_bags", m.counters.cut_bags},   {"seconds", m.counters.seconds}};
  j["files"] = json::array();
  for (const auto& f : m.files)
    j["files"].push_back({{"name", f.name}, {"bytes", f.bytes}, {"crc32c", f.crc32c}});
  return j.dump(2) + "\n";
}

std::optional<std::string> parse_manifest(const std::string& text, const std::string& path,
                                          manifest& out) {
  std::string where = "'" + path + "'";
  try {
    const json j = json::parse(text);
    if (json_field<std::string>(j, "format") != "shadowsync-checkpoint")
      return "'" + path + "' is not a shadowsync checkpoint manifest (format '" +
             json_field<std::string>(j, "format") + "')";
    out.version = json_field<int>(j, "version");
    if (out.version != manifest_version)
      return "'" + path + "': checkpoint format version " + std::to_string(out.version) +
             ", this build reads version " + std::to_string(manifest_version);
    out.config_ini = json_field<std::string>(j, "config");
    out.mode = json_field<std::string>(j, "mode");
    out.examples = json_field<std::uint64_t>(j, "examples");
    out.readers.clear();
    for (const auto& r : j.at("readers"))
      out.readers.push_back(
          {json_field<std::uint64_t>(r, "part"), json_field<std::uint64_t>(r, "parts"),
           json_field<std::uint64_t>(r, "epoch"), json_field<std::uint64_t>(r, "examples"),
           json_field<std::uint64_t>(r, "lines"), json_field<std::uint64_t>(r, "malformed"),
           r.contains("served") ? json_field<std::uint64_t>(r, "served") : 0,
           r.contains("cut_bags") ? json_field<std::uint64_t>(r, "cut_bags") : 0});
    out.model_seed = json_field<std::uint64_t>(j.at("rng"), "model_seed");
    const auto& c = j.at("metrics");
    out.counters.loss_sum = json_field<double>(c, "loss_sum");
    out.counters.prob_sum = json_field<double>(c, "prob_sum");
    out.counters.positives = json_field<std::uint64_t>(c, "positives");
    out.counters.malformed = json_field<std::uint64_t>(c, "malformed");
    // (absent from the checkpoints of builds before multi-hot bags were counted)
    out.counters.cut_bags = c.contains("cut_bags") ? json_field<std::uint64_t>(c, "cut_bags") : 0;
    out.counters.seconds = json_field<double>(c, "seconds");
    out.files.clear();
    for (const auto& f : j.at("files")) {
      file_info i;
      i.name = json_field<std::string>(f, "name");
      i.bytes = json_field<std::uint64_t>(f, "bytes");
      i.crc32c = json_field<std::uint32_t>(f, "crc32c");
      if (i.name.empty() || i.name.find('/') != std::string::npos || i.name[0] == '.')
        return "'" + path + "': file name '" + i.name + "' is not a plain file name";
      out.files.push_back(std::move(i));
    }
  } catch (const std::exception& e) {
    return where + ": " + e.what();
  }
  return std::nullopt;
}

} // namespace checkpoint
