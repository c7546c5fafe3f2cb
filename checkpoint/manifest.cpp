#include "checkpoint/manifest.hpp"

#include <nlohmann/json.hpp>

namespace checkpoint {

using nlohmann::json;

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
                            {"served", r.served}});
  j["rng"] = {{"model_seed", m.model_seed}};
  j["metrics"] = {{"loss_sum", m.counters.loss_sum},   {"prob_sum", m.counters.prob_sum},
                  {"positives", m.counters.positives}, {"malformed", m.counters.malformed},
                  {"seconds", m.counters.seconds}};
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
    where += ": field";
    if (j.at("format").get<std::string>() != "shadowsync-checkpoint")
      return "'" + path + "' is not a shadowsync checkpoint manifest (format '" +
             j.at("format").get<std::string>() + "')";
    out.version = j.at("version").get<int>();
    if (out.version != manifest_version)
      return "'" + path + "': checkpoint format version " + std::to_string(out.version) +
             ", this build reads version " + std::to_string(manifest_version);
    out.config_ini = j.at("config").get<std::string>();
    out.mode = j.at("mode").get<std::string>();
    out.examples = j.at("examples").get<std::uint64_t>();
    out.readers.clear();
    for (const auto& r : j.at("readers"))
      out.readers.push_back({r.at("part").get<std::uint64_t>(), r.at("parts").get<std::uint64_t>(),
                             r.at("epoch").get<std::uint64_t>(),
                             r.at("examples").get<std::uint64_t>(),
                             r.at("lines").get<std::uint64_t>(),
                             r.at("malformed").get<std::uint64_t>(),
                             r.value("served", std::uint64_t{0})});
    out.model_seed = j.at("rng").at("model_seed").get<std::uint64_t>();
    const auto& c = j.at("metrics");
    out.counters.loss_sum = c.at("loss_sum").get<double>();
    out.counters.prob_sum = c.at("prob_sum").get<double>();
    out.counters.positives = c.at("positives").get<std::uint64_t>();
    out.counters.malformed = c.at("malformed").get<std::uint64_t>();
    out.counters.seconds = c.at("seconds").get<double>();
    out.files.clear();
    for (const auto& f : j.at("files")) {
      file_info i;
      i.name = f.at("name").get<std::string>();
      i.bytes = f.at("bytes").get<std::uint64_t>();
      i.crc32c = f.at("crc32c").get<std::uint32_t>();
      if (i.name.empty() || i.name.find('/') != std::string::npos || i.name[0] == '.')
        return "'" + path + "': file name '" + i.name + "' is not a plain file name";
      out.files.push_back(std::move(i));
    }
  } catch (const json::exception& e) {
    return where + ": " + e.what();
  }
  return std::nullopt;
}

} // namespace checkpoint
