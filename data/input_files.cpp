#include "data/input_files.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <glob.h>

#include "data/byte_stream.hpp"

namespace data {

namespace {

namespace fs = std::filesystem;

bool is_pattern(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_regular(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec); // follows symbolic links
}

bool list_folder(const std::string& dir, std::vector<std::string>* out, std::string* error) {
  std::error_code ec;
  std::vector<std::string> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || ends_with(name, ".meta.json"))
      continue;
    if (is_regular(it->path().string()))
      found.push_back(it->path().string());
  }
  if (ec) {
    *error = "cannot list the folder '" + dir + "': " + ec.message();
    return false;
  }
  if (found.empty()) {
    *error = "'" + dir + "': the folder holds no data file (expected files directly inside it; "
             "sub-folders, hidden files and .meta.json sidecars are not read)";
    return false;
  }
  std::sort(found.begin(), found.end()); // byte order of the whole path = of the names
  out->insert(out->end(), found.begin(), found.end());
  return true;
}

bool expand_pattern(const std::string& pattern, std::vector<std::string>* out, std::string* error) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> found;
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i)
      if (is_regular(g.gl_pathv[i]))
        found.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    *error = "cannot expand the pattern '" + pattern + "': " + (rc == GLOB_NOSPACE ? "out of memory" : "read error");
    return false;
  }
  if (found.empty()) {
    *error = "'" + pattern + "' matches no file (expected a pattern like data/day_*.gz)";
    return false;
  }
  std::sort(found.begin(), found.end());
  out->insert(out->end(), found.begin(), found.end());
  return true;
}

} // namespace

bool expand_inputs(const std::vector<std::string>& entries, std::vector<std::string>* files,
                   std::string* error) {
  std::vector<std::string> out;
  for (const std::string& e : entries) {
    std::error_code ec;
    if (is_stdin(e)) {
      out.push_back(e);
    } else if (fs::is_directory(e, ec)) {
      if (!list_folder(e, &out, error))
        return false;
    } else if (is_pattern(e) && !fs::exists(e, ec)) {
      if (!expand_pattern(e, &out, error))
        return false;
    } else {
      out.push_back(e);
    }
  }
  *files = std::move(out);
  return true;
}

} // namespace data
