#include "checkpoint/store.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include <unistd.h>

#include "checkpoint/dir_lock.hpp"

namespace checkpoint {

namespace fs = std::filesystem;

namespace {

bool fs_fail(std::string* err, const std::string& what, const std::error_code& ec) {
  if (err)
    *err = what + ": " + ec.message();
  return false;
}

constexpr const char* prefix = "ckpt-";

// `name` is `base` or base.G (G >= 1): generation 0 or G, else -1.
long generation_of(const std::string& name, const std::string& base) {
  if (name == base)
    return 0;
  if (name.size() <= base.size() + 1 || name.compare(0, base.size(), base) != 0 ||
      name[base.size()] != '.')
    return -1;
  long g = 0;
  for (std::size_t i = base.size() + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || g > 100000000)
      return -1;
    g = g * 10 + (name[i] - '0');
  }
  return g;
}

// ckpt-N or ckpt-N.G: (N, G) for the pruning order; nullopt otherwise.
std::optional<std::pair<std::uint64_t, long>> checkpoint_order(const std::string& name) {
  if (name.rfind(prefix, 0) != 0)
    return std::nullopt;
  const auto dot = name.find('.');
  const std::string base = name.substr(0, dot);
  const std::string digits = base.substr(std::string(prefix).size());
  if (digits.empty() || digits.size() > 19 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const long g = generation_of(name, base);
  if (g < 0)
    return std::nullopt;
  return std::pair{std::stoull(digits), g};
}

// The pid at the end of a temporary folder's name (.tmp-NAME-PID), or 0.
long tmp_owner(const std::string& name) {
  const auto dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 >= name.size() || name.size() - dash > 12 ||
      name.find_first_not_of("0123456789", dash + 1) != std::string::npos)
    return 0;
  return std::stol(name.substr(dash + 1));
}

} // namespace

std::string checkpoint_name(std::uint64_t examples) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%012llu", prefix, static_cast<unsigned long long>(examples));
  return buf;
}

bool folder_writer::begin(const std::string& dir, const std::string& name, std::string* err) {
  dir_ = dir;
  name_ = name;
  files_.clear();
  if (auto e = lock_checkpoint_dir(dir)) { // creates it; one run owns it
    if (err)
      *err = *e;
    return false;
  }
  std::error_code ec;
  tmp_ = dir + "/.tmp-" + name + "-" + std::to_string(::getpid());
  fs::remove_all(tmp_, ec);
  fs::create_directory(tmp_, ec);
  if (ec)
    return fs_fail(err, "cannot create '" + tmp_ + "'", ec);
  return true;
}

void folder_writer::abandon() {
  std::error_code ec;
  if (!tmp_.empty())
    fs::remove_all(tmp_, ec);
}

bool folder_writer::commit(manifest m, std::size_t keep, std::string* folder, std::string* err) {
  m.files = files_;
  if (!write_file_atomic(path("manifest.json"), to_json(m), err) || !fsync_dir(tmp_, err))
    return false;
  // A checkpoint of a name that exists (LATEST may name it) goes in beside
  // it as the next generation, NAME.G; LATEST switches to it, and only then
  // are the older generations removed. So LATEST never names a folder that
  // is missing a file, at any instant.
  std::error_code ec;
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir_, ec))
    entries.push_back(e.path().filename().string());
  long newest = -1;
  for (const auto& n : entries)
    newest = std::max(newest, generation_of(n, name_));
  const std::string final_name = newest < 0 ? name_ : name_ + "." + std::to_string(newest + 1);
  const std::string final_path = dir_ + "/" + final_name;
  fs::rename(tmp_, final_path, ec);
  if (ec)
    return fs_fail(err, "cannot rename '" + tmp_ + "' to '" + final_path + "'", ec);
  if (!fsync_dir(dir_, err) || !write_file_atomic(dir_ + "/LATEST", final_name + "\n", err))
    return false;
  *folder = final_path;
  // The older generations of this name, then all but the newest `keep`
  // (by examples, then generation), never the one LATEST names; and
  // temporary folders of this run or of a dead one (a live run's are its
  // own business: with the dir's lock there is none but a pre-lock binary).
  std::vector<std::pair<std::pair<std::uint64_t, long>, std::string>> ckpts;
  for (const auto& n : entries) {
    const auto p = dir_ + "/" + n;
    if (n == final_name || !fs::is_directory(p, ec))
      continue;
    if (generation_of(n, name_) >= 0) {
      fs::remove_all(p, ec);
    } else if (auto order = checkpoint_order(n)) {
      ckpts.push_back({*order, n});
    } else if (n.rfind(".tmp-", 0) == 0 && p != tmp_) {
      const long owner = tmp_owner(n);
      if (owner == long(::getpid()) || (owner > 0 && !process_alive(owner)))
        fs::remove_all(p, ec);
    }
  }
  if (auto order = checkpoint_order(final_name))
    ckpts.push_back({*order, final_name});
  std::sort(ckpts.begin(), ckpts.end());
  for (std::size_t i = 0; keep > 0 && i + keep < ckpts.size(); ++i)
    if (ckpts[i].second != final_name)
      fs::remove_all(dir_ + "/" + ckpts[i].second, ec);
  return fsync_dir(dir_, err);
}

const file_info* opened_checkpoint::entry(const std::string& name) const {
  for (const auto& f : m.files)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::optional<std::string> open_checkpoint(const std::string& path, opened_checkpoint& out) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return "checkpoint '" + path + "' does not exist";
  std::string folder = path;
  std::string err;
  if (!fs::exists(path + "/manifest.json", ec)) {
    if (!fs::exists(path + "/LATEST", ec))
      return "'" + path + "' is neither a checkpoint folder (no manifest.json) nor a checkpoint "
                          "dir (no LATEST)";
    std::string latest;
    if (!read_text_file(path + "/LATEST", &latest, &err))
      return err;
    while (!latest.empty() && (latest.back() == '\n' || latest.back() == '\r'))
      latest.pop_back();
    if (latest.rfind(prefix, 0) != 0 || latest.find('/') != std::string::npos)
      return "'" + path + "/LATEST' names '" + latest +
             "', expected a folder name ckpt-N (or ckpt-N.G)";
    folder = path + "/" + latest;
    if (!fs::exists(folder + "/manifest.json", ec))
      return "'" + path + "/LATEST' names '" + latest + "', which has no manifest.json";
  }
  out.folder = folder;
  std::string text;
  if (!read_text_file(folder + "/manifest.json", &text, &err))
    return err;
  if (auto e = parse_manifest(text, folder + "/manifest.json", out.m))
    return e;
  std::set<std::string> listed;
  for (const auto& f : out.m.files) {
    if (!listed.insert(f.name).second)
      return "'" + folder + "/manifest.json' lists '" + f.name + "' twice";
    const auto p = folder + "/" + f.name;
    const auto size = fs::file_size(p, ec);
    if (ec)
      return "'" + p + "' is missing (listed in the manifest)";
    if (size != f.bytes)
      return "'" + p + "' has " + std::to_string(size) + " bytes, the manifest says " +
             std::to_string(f.bytes) + (size < f.bytes ? " (truncated)" : "");
  }
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    const auto n = e.path().filename().string();
    if (n != "manifest.json" && !listed.count(n))
      return "'" + e.path().string() + "' is not listed in the manifest (extra file)";
  }
  return std::nullopt;
}

std::optional<std::string> check_crc(const opened_checkpoint& c, const std::string& name,
                                     std::uint32_t crc) {
  const auto* f = c.entry(name);
  if (!f)
    return "'" + c.file(name) + "' is not listed in the manifest";
  if (f->crc32c != crc)
    return "'" + c.file(name) + "': checksum mismatch (CRC32C " + std::to_string(crc) +
           ", the manifest says " + std::to_string(f->crc32c) + "): the file is damaged";
  return std::nullopt;
}

} // namespace checkpoint
