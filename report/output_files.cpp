#include "report/output_files.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace runtime {

namespace fs = std::filesystem;

namespace {

std::string folder_of(const std::string& path) {
  auto parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// A new file can be created in `dir`: creates and removes a probe file.
std::optional<std::string> probe_folder(const std::string& key, const std::string& path,
                                        const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return "option '" + key + "': cannot write '" + path + "': folder '" + dir +
           "' does not exist";
  if (!S_ISDIR(st.st_mode))
    return "option '" + key + "': cannot write '" + path + "': '" + dir + "' is not a folder";
  const std::string probe = dir + "/.ss-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return "option '" + key + "': cannot write '" + path + "': cannot create a file in '" + dir +
           "': " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

} // namespace

void input_files::add(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0)
    return;
  files_.push_back({std::uint64_t(st.st_dev), std::uint64_t(st.st_ino), path});
  if (!S_ISDIR(st.st_mode))
    return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (::stat(e.path().c_str(), &st) == 0 && S_ISREG(st.st_mode))
      files_.push_back({std::uint64_t(st.st_dev), std::uint64_t(st.st_ino), e.path().string()});
}

void input_files::add(const std::vector<std::string>& paths) {
  for (const auto& p : paths)
    add(p);
}

std::optional<std::string> input_files::same_as(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return std::nullopt;
  for (const auto& f : files_)
    if (f.dev == std::uint64_t(st.st_dev) && f.ino == std::uint64_t(st.st_ino))
      return f.path;
  return std::nullopt;
}

std::optional<std::string> check_output_file(const std::string& key, const std::string& path,
                                             const input_files& inputs) {
  if (path.empty())
    return std::nullopt;
  if (auto in = inputs.same_as(path))
    return "option '" + key + "': '" + path + "' is one of this run's inputs ('" + *in +
           "'); writing it would destroy that input";
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return "option '" + key + "': '" + path + "' is a folder, expected a file path";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return std::nullopt; // a device or a pipe: written in place
  return probe_folder(key, path, folder_of(path));
}

std::optional<std::string> check_output_dir(const std::string& key, const std::string& path,
                                            const input_files& inputs) {
  if (path.empty())
    return std::nullopt;
  if (auto in = inputs.same_as(path))
    return "option '" + key + "': '" + path + "' is one of this run's inputs ('" + *in + "')";
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))
    return "option '" + key + "': '" + path + "' exists and is not a folder";
  fs::create_directories(path, ec);
  if (ec)
    return "option '" + key + "': cannot create folder '" + path + "': " + ec.message();
  return probe_folder(key, path, path);
}

replacing_file::~replacing_file() {
  if (f_) {
    std::fclose(f_);
    if (!tmp_.empty())
      ::unlink(tmp_.c_str());
  }
}

bool replacing_file::open(const std::string& path, std::string* err) {
  path_ = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    tmp_.clear(); // a device or a pipe (/dev/stdout): written in place, never replaced
    f_ = std::fopen(path.c_str(), "wb");
    if (!f_ && err)
      *err = "cannot write '" + path + "': " + std::strerror(errno);
    return f_ != nullptr;
  }
  tmp_ = path + ".tmp-" + std::to_string(::getpid());
  f_ = std::fopen(tmp_.c_str(), "wbx"); // x: never onto an existing file
  if (!f_ && errno == EEXIST) {         // a dead run's left-over of our pid
    ::unlink(tmp_.c_str());
    f_ = std::fopen(tmp_.c_str(), "wbx");
  }
  if (!f_ && err)
    *err = "cannot create '" + tmp_ + "': " + std::strerror(errno);
  return f_ != nullptr;
}

bool replacing_file::commit(std::string* err) {
  if (!f_) {
    if (err)
      *err = "'" + path_ + "' was not opened";
    return false;
  }
  bool ok = std::fflush(f_) == 0 && !std::ferror(f_) &&
            (tmp_.empty() || ::fsync(::fileno(f_)) == 0);
  int e = errno;
  ok = (std::fclose(f_) == 0) && ok;
  f_ = nullptr;
  if (tmp_.empty()) {
    if (!ok && err)
      *err = "cannot write '" + path_ + "': " + std::strerror(e);
    return ok;
  }
  if (ok && std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    ok = false;
    e = errno;
  }
  if (!ok) {
    ::unlink(tmp_.c_str());
    if (err)
      *err = "cannot write '" + path_ + "': " + std::strerror(e);
  }
  return ok;
}

bool write_replacing(const std::string& path, const std::string& text, std::string* err) {
  replacing_file f;
  if (!f.open(path, err))
    return false;
  std::fwrite(text.data(), 1, text.size(), f.get());
  return f.commit(err);
}

} // namespace runtime
