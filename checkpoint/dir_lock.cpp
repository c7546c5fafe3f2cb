#include "checkpoint/dir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace checkpoint {

namespace {

namespace fs = std::filesystem;

std::mutex mu;
std::map<std::string, int> held; // canonical dir -> the LOCK file's descriptor

std::string owner_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s(buf, n > 0 ? std::size_t(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s.empty() ? "unknown" : s;
}

} // namespace

bool process_alive(long pid) {
  return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

std::optional<std::string> lock_checkpoint_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return "cannot create checkpoint dir '" + dir + "': " + ec.message();
  const auto key = fs::weakly_canonical(dir, ec).string();
  std::lock_guard<std::mutex> g(mu);
  // A held dir that was removed since (its LOCK file unlinked: a test's
  // temporary dir, a CPR folder cleared for a new run) is let go, so
  // descriptors stay bounded by the dirs that exist, and a dir created
  // again under the same name is locked again.
  for (auto it = held.begin(); it != held.end();) {
    struct stat st {};
    if (::fstat(it->second, &st) == 0 && st.st_nlink == 0) {
      ::close(it->second);
      it = held.erase(it);
    } else {
      ++it;
    }
  }
  if (held.count(key))
    return std::nullopt;
  const std::string path = dir + "/LOCK";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return "cannot open '" + path + "': " + std::strerror(errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    const std::string owner = owner_of(fd);
    ::close(fd);
    if (e == EWOULDBLOCK)
      return "checkpoint dir '" + dir + "' is in use by another run (pid " + owner +
             " holds '" + path + "'); one run owns a checkpoint dir at a time";
    return "cannot lock '" + path + "': " + std::strerror(e);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    const int e = errno;
    ::close(fd);
    return "cannot write '" + path + "': " + std::strerror(e);
  }
  held[key] = fd; // kept open: the lock lasts as long as the process
  return std::nullopt;
}

std::optional<std::string> lock_checkpoint_dirs(const std::vector<std::string>& dirs) {
  for (const auto& d : dirs)
    if (!d.empty())
      if (auto e = lock_checkpoint_dir(d))
        return e;
  return std::nullopt;
}

} // namespace checkpoint
