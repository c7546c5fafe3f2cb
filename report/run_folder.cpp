#include "report/run_folder.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace runtime {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const auto comma = line.find(',', pos);
    out.push_back(line.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos)
      return out;
    pos = comma + 1;
  }
}

bool to_number(const std::string& s, double* out) {
  if (s.empty())
    return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v))
    return false;
  *out = v;
  return true;
}

// Reads `path`: nullopt when it does not exist, an error when it cannot be read.
std::optional<std::string> read_file(const std::string& path, std::string* text, bool* exists) {
  struct stat st {};
  *exists = ::stat(path.c_str(), &st) == 0;
  if (!*exists)
    return std::nullopt;
  if (!S_ISREG(st.st_mode))
    return path + ": not a regular file";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in && !in.eof())
    return path + ": cannot be read: " + std::strerror(errno);
  *text = s.str();
  return std::nullopt;
}

} // namespace

std::optional<std::string> run_folder::setting(const std::string& key) const {
  for (const auto& s : settings)
    if (s.key == key)
      return s.value;
  return std::nullopt;
}

std::optional<std::string> parse_settings(const std::string& text, const std::string& file,
                                          std::vector<run_setting>* out) {
  std::string group;
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    const std::string where = file + ":" + std::to_string(i + 1) + ": ";
    if (line.empty() || line[0] == ';' || line[0] == '#')
      continue;
    if (line[0] == '[') {
      if (line.back() != ']' || line.size() < 3)
        return where + "expected a group header '[group]', got '" + line + "'";
      group = trim(line.substr(1, line.size() - 2));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos || trim(line.substr(0, eq)).empty())
      return where + "expected 'key = value', got '" + line + "'";
    if (group.empty())
      return where + "'key = value' before any [group]";
    out->push_back({group + "." + trim(line.substr(0, eq)), trim(line.substr(eq + 1))});
  }
  return std::nullopt;
}

std::optional<std::string> parse_timeline(const std::string& text, const std::string& file,
                                          std::vector<timeline_row>* out) {
  const auto lines = split_lines(text);
  if (lines.empty())
    return file + ":1: expected the header line '" + timeline_header() + "', the file is empty";
  const auto header = split_fields(lines[0]);
  auto column = [&](const char* name) -> int {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (trim(header[c]) == name)
        return int(c);
    return -1;
  };
  for (const char* required : {"time_s", "examples"})
    if (column(required) < 0)
      return file + ":1: the header has no column '" + required + "' (expected '" +
             timeline_header() + "')";
  // host_busy_0, host_busy_1, ...: as many as the header has in a row from 0.
  std::vector<std::string> host_columns;
  while (column(("host_busy_" + std::to_string(host_columns.size())).c_str()) >= 0)
    host_columns.push_back("host_busy_" + std::to_string(host_columns.size()));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty())
      continue;
    const std::string where = file + ":" + std::to_string(i + 1) + ": ";
    const auto f = split_fields(lines[i]);
    if (f.size() != header.size())
      return where + std::to_string(f.size()) + " fields, expected " +
             std::to_string(header.size()) + " (as in the header)";
    timeline_row r;
    // One column: absent (no such column or an empty field) or a number.
    auto get = [&](const char* name, std::optional<double>* v) -> std::optional<std::string> {
      const int c = column(name);
      if (c < 0 || trim(f[c]).empty())
        return std::nullopt;
      double x = 0;
      if (!to_number(trim(f[c]), &x))
        return where + "column '" + name + "': '" + trim(f[c]) + "' is not a number";
      *v = x;
      return std::nullopt;
    };
    std::optional<double> time, examples, eps, rounds, bytes;
    const std::pair<const char*, std::optional<double>*> columns[] = {
      {"time_s", &time},           {"examples", &examples},
      {"examples_per_s", &eps},    {"train_ne", &r.train_ne},
      {"sync_rounds", &rounds},    {"sync_gap", &r.sync_gap},
      {"blocked_fraction", &r.blocked_fraction}, {"bytes", &bytes}};
    for (const auto& [name, v] : columns)
      if (auto e = get(name, v))
        return e;
    r.host_busy.resize(host_columns.size());
    for (std::size_t h = 0; h < host_columns.size(); ++h)
      if (auto e = get(host_columns[h].c_str(), &r.host_busy[h]))
        return e;
    if (!time || !examples)
      return where + "column '" + (time ? "examples" : "time_s") + "' is empty";
    r.time_s = *time;
    r.examples = std::uint64_t(std::max(0.0, *examples));
    r.examples_per_s = eps.value_or(0);
    r.sync_rounds = std::uint64_t(std::max(0.0, rounds.value_or(0)));
    r.bytes = std::uint64_t(std::max(0.0, bytes.value_or(0)));
    out->push_back(r);
  }
  return std::nullopt;
}

std::optional<std::string> parse_metrics(const std::string& text, const std::string& file,
                                         nlohmann::json* out) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Where the syntax error is: the parser's byte position, as line and column.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i, ++col)
      if (text[i] == '\n')
        line += 1, col = 0;
    return file + ":" + std::to_string(line) + ":" + std::to_string(col) +
           ": not valid JSON (expected the metrics object written by train)";
  } catch (const nlohmann::json::exception& e) { // a number past a double's range
    return file + ":1: not valid JSON (expected the metrics object written by train): " +
           e.what();
  }
  if (!j.is_object())
    return file + ":1: expected a JSON object (the metrics written by train)";
  *out = std::move(j);
  return std::nullopt;
}

std::optional<std::string> read_run_folder(const std::string& dir, run_folder* out) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return dir + ": no such run folder (expected a folder written by train --output.dir)";
  if (!S_ISDIR(st.st_mode))
    return dir + ": not a folder (expected a folder written by train --output.dir)";
  const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  out->dir = dir;
  std::string text;
  bool exists = false;
  if (auto e = read_file(base + "config.ini", &text, &exists))
    return e;
  if (!exists)
    return base + "config.ini: missing (expected the run's settings, written by train "
                  "--output.dir)";
  if (auto e = parse_settings(text, base + "config.ini", &out->settings))
    return e;
  bool has_metrics = false;
  if (auto e = read_file(base + "metrics.json", &text, &has_metrics))
    return e;
  if (has_metrics)
    if (auto e = parse_metrics(text, base + "metrics.json", &out->metrics))
      return e;
  if (auto e = read_file(base + "timeline.csv", &text, &out->has_timeline))
    return e;
  if (out->has_timeline)
    if (auto e = parse_timeline(text, base + "timeline.csv", &out->timeline))
      return e;
  if (!has_metrics && !out->has_timeline)
    return dir + ": neither metrics.json nor timeline.csv (expected a folder written by train "
                 "--output.dir)";
  return std::nullopt;
}

} // namespace runtime
