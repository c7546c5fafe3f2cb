#include "checkpoint/store.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include <unistd.h>

namespace checkpoint {

namespace fs = std::filesystem;

namespace {

bool fs_fail(std::string* err, const std::string& what, const std::error_code& ec) {
  if (err)
    *err = what + ": " + ec.message();
  return false;
}

constexpr const char* prefix = "ckpt-";

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
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fs_fail(err, "cannot create checkpoint dir '" + dir + "'", ec);
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
  const std::string final_path = dir_ + "/" + name_;
  std::error_code ec;
  fs::remove_all(final_path, ec); // an older checkpoint at the same count
  fs::rename(tmp_, final_path, ec);
  if (ec)
    return fs_fail(err, "cannot rename '" + tmp_ + "' to '" + final_path + "'", ec);
  if (!fsync_dir(dir_, err) || !write_file_atomic(dir_ + "/LATEST", name_ + "\n", err))
    return false;
  *folder = final_path;
  // Keep the newest `keep` (names sort by examples); drop stale temporaries.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const auto n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && e.is_directory())
      names.push_back(n);
    else if (n.rfind(".tmp-", 0) == 0 && e.path().string() != tmp_)
      fs::remove_all(e.path(), ec);
  }
  std::sort(names.begin(), names.end());
  for (std::size_t i = 0; keep > 0 && i + keep < names.size(); ++i)
    if (names[i] != name_)
      fs::remove_all(dir_ + "/" + names[i], ec);
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
      return "'" + path + "/LATEST' names '" + latest + "', expected a folder name ckpt-N";
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
