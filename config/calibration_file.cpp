#include "config/calibration_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "config/kept_calibration.hpp"
#include "config/option_values.hpp"

#ifndef SS_CALIBRATIONS_DIR
#define SS_CALIBRATIONS_DIR ""
#endif

namespace runtime {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const char* type_name(const json& v) {
  return v.is_number() ? "a number" : v.is_string() ? "a string" : v.is_object() ? "an object"
       : v.is_array() ? "an array" : v.is_boolean() ? "a boolean" : "null";
}

// Checks that `obj` (at `where`: "" or "machine.") has exactly `required`
// plus `optional` keys; the error names the first stray or missing key.
std::optional<std::string> check_keys(const json& obj, const std::string& where,
                                      const std::vector<std::string>& required,
                                      const std::vector<std::string>& optional = {}) {
  for (const auto& [k, v] : obj.items()) {
    (void)v;
    if (std::find(required.begin(), required.end(), k) == required.end() &&
        std::find(optional.begin(), optional.end(), k) == optional.end())
      return "unknown key '" + where + k + "' (expected " +
             detail::join(required, "'", "'") + ")";
  }
  for (const auto& k : required)
    if (!obj.contains(k))
      return "missing key '" + where + k + "'";
  return std::nullopt;
}

std::optional<std::string> get_string(const json& obj, const std::string& where,
                                      const std::string& k, std::string& out) {
  const auto& v = obj.at(k);
  if (!v.is_string())
    return "key '" + where + k + "' must be a string, not " + type_name(v);
  out = v.get<std::string>();
  return std::nullopt;
}

std::optional<std::string> parse_record(const json& j, calibration_record& out) {
  if (!j.is_object())
    return std::string("the file must hold one JSON object, not ") + type_name(j);
  if (auto e = check_keys(j, "", {"shadowsync_calibration", "machine", "sim"}, {"note"}))
    return e;
  const auto& ver = j.at("shadowsync_calibration");
  if (!ver.is_number_integer() || ver.get<std::int64_t>() != 1)
    return std::string("key 'shadowsync_calibration' must be 1 (the format's version)");
  if (j.contains("note"))
    if (auto e = get_string(j, "", "note", out.note))
      return e;
  const auto& m = j.at("machine");
  if (!m.is_object())
    return std::string("key 'machine' must be an object, not ") + type_name(m);
  if (auto e = check_keys(m, "machine.", {"cpu", "isa", "cores", "date", "command"}))
    return e;
  for (auto [k, dst] : {std::pair<const char*, std::string*>{"cpu", &out.cpu},
                        {"isa", &out.isa}, {"date", &out.date}, {"command", &out.command}})
    if (auto e = get_string(m, "machine.", k, *dst))
      return e;
  if (!m.at("cores").is_number_integer() || m.at("cores").get<std::int64_t>() < 1)
    return std::string("key 'machine.cores' must be a whole number of at least 1");
  out.cores = m.at("cores").get<std::int64_t>();
  const auto& s = j.at("sim");
  if (!s.is_object())
    return std::string("key 'sim' must be an object, not ") + type_name(s);
  const auto& optional = calibration_optional_keys();
  std::vector<std::string> required;
  for (const auto& k : calibration_keys())
    if (std::find(optional.begin(), optional.end(), k) == optional.end())
      required.push_back(k);
  if (auto e = check_keys(s, "sim.", required, optional))
    return e;
  for (const auto& k : calibration_keys()) {
    if (!s.contains(k)) { // an optional key a file of an older calibrate lacks: 0, the model
      out.sim[k] = 0.0;
      continue;
    }
    const auto& v = s.at(k);
    if (!v.is_number())
      return "key 'sim." + k + "' must be a number, not " + type_name(v);
    out.sim[k] = v.get<double>();
  }
  return std::nullopt;
}

// The folders shipped presets are looked up in.
std::vector<fs::path> preset_dirs() {
  std::vector<fs::path> out;
  if (*SS_CALIBRATIONS_DIR)
    out.emplace_back(SS_CALIBRATIONS_DIR);
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    out.push_back(exe.parent_path().parent_path() / "config" / "calibrations");
  return out;
}

} // namespace

const std::vector<std::string>& calibration_keys() {
  static const std::vector<std::string> keys = {
    "gflops",        "memory-gbps",     "message-us",        "lookup-row-ns",
    "push-row-ns",   "core-contention", "remote-message-us", "remote-gbps",
    "parse-example-ns", "batch-id-ns", "mp-push-value-ns", "mp-reply-value-ns",
    "remote-tls-message-us", "remote-tls-gbps", "remote-streamed-message-us",
    "remote-tls-streamed-message-us", "mp-push-map-rows", "mp-push-value-big-ns",
    "mp-decode-value-ns", "sync-gbps", "jitter"};
  return keys;
}

const std::vector<std::string>& calibration_optional_keys() {
  static const std::vector<std::string> keys = {
    "parse-example-ns", "batch-id-ns",           "mp-push-value-ns",
    "mp-reply-value-ns", "remote-tls-message-us", "remote-tls-gbps",
    "remote-streamed-message-us", "remote-tls-streamed-message-us", "mp-push-map-rows",
    "mp-push-value-big-ns", "mp-decode-value-ns", "sync-gbps", "jitter"};
  return keys;
}

std::string calibration_json(const calibration_record& r) {
  json sim = json::object();
  for (const auto& k : calibration_keys())
    sim[k] = r.sim.count(k) ? r.sim.at(k) : 0.0;
  json j = {{"shadowsync_calibration", 1},
            {"machine",
             {{"cpu", r.cpu}, {"isa", r.isa}, {"cores", r.cores}, {"date", r.date},
              {"command", r.command}}},
            {"sim", sim}};
  if (!r.note.empty())
    j["note"] = r.note;
  return j.dump(2) + "\n";
}

std::optional<std::string> read_calibration(const std::string& path, calibration_record& out) {
  const std::string who = "calibration file '" + path + "'";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return who + ": cannot open it (" + std::strerror(errno) + ")";
  std::stringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::parse_error& e) {
    return who + ": not valid JSON (truncated?): " + e.what();
  } catch (const json::exception& e) { // a number past a double's range
    return who + ": not valid JSON: " + e.what();
  }
  calibration_record r;
  if (auto e = parse_record(j, r))
    return who + ": " + *e;
  out = std::move(r);
  return std::nullopt;
}

std::optional<std::string> resolve_calibration(const std::string& value, std::string& path) {
  if (value == this_machine_calibration) {
    path = kept_calibration_path();
    std::error_code ec;
    if (!path.empty() && fs::is_regular_file(path, ec))
      return std::nullopt;
    return "option 'sim.calibration' = this-machine: " +
           (path.empty() ? std::string("no place to keep a calibration (neither "
                                       "SHADOWSYNC_STATE_DIR, XDG_STATE_HOME nor HOME is set)")
                         : "no calibration of this machine is kept at " + path) +
           " (shadowsync train measures and keeps it on a virtual-clock run; "
           "'shadowsync calibrate --out=FILE.json' measures one by hand)";
  }
  const bool preset = value.find('/') == std::string::npos &&
                      !(value.size() >= 5 && value.compare(value.size() - 5, 5, ".json") == 0);
  if (!preset) {
    path = value;
    return std::nullopt;
  }
  std::set<std::string> names;
  for (const auto& dir : preset_dirs()) {
    const auto p = dir / (value + ".json");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      path = p.lexically_normal().string();
      return std::nullopt;
    }
    for (const auto& f : fs::directory_iterator(dir, ec))
      if (f.path().extension() == ".json")
        names.insert(f.path().stem().string());
  }
  std::vector<std::string> list(names.begin(), names.end());
  return "option 'sim.calibration' = '" + value + "': no such preset (presets: " +
         (list.empty() ? std::string("none found") : detail::join(list)) +
         "; a file is named by a path with a '/' or ending in .json)";
}

std::string describe_calibration(const std::string& path, const calibration_record& r) {
  return path + " (" + r.cpu + ", " + r.isa + ", " + std::to_string(r.cores) + " cores, " +
         r.date.substr(0, 10) + ")";
}

std::optional<std::string> apply_calibration(option_set& o) {
  const auto value = effective_calibration(o);
  if (value.empty())
    return std::nullopt;
  std::string path;
  if (auto e = resolve_calibration(value, path))
    return e;
  calibration_record r;
  if (auto e = read_calibration(path, r))
    return e;
  for (const auto& k : calibration_keys())
    if (auto e = o.set_if_unset("sim." + k, detail::format_real(r.sim.at(k)),
                                "calibration file '" + path + "'"))
      return e;
  return std::nullopt;
}

std::string constants_source(const option_set& o) {
  std::string out = "built-in defaults";
  const auto value = effective_calibration(o);
  std::string path;
  calibration_record r;
  const bool read =
    !value.empty() && !resolve_calibration(value, path) && !read_calibration(path, r);
  if (read) // a preset by its place in the source tree, not this machine's path
    out = describe_calibration(path == value || value == this_machine_calibration
                                 ? path : "config/calibrations/" + value + ".json", r);
  std::vector<std::string> others; // set otherwise, to another value than the file's
  for (const auto& k : calibration_keys()) {
    const auto src = o.source("sim." + k);
    if (src != "default" && src.rfind("calibration file", 0) != 0 &&
        !(read && o.get_real("sim." + k) == r.sim.at(k)))
      others.push_back("sim." + k + " from " + src);
  }
  if (!others.empty())
    out += "; " + detail::join(others);
  return out;
}

} // namespace runtime
