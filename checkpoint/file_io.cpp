#include "checkpoint/file_io.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/crc32c.hpp"

namespace checkpoint {

namespace {

bool fail(std::string* err, const std::string& what, const std::string& path, int e) {
  if (err)
    *err = what + " '" + path + "': " + std::strerror(e);
  return false;
}

std::atomic<bool> fault_set{false};
write_fault fault; // read only while fault_set

} // namespace

void set_write_fault(const write_fault* f) {
  fault_set = false;
  if (f) {
    fault = *f;
    fault_set = true;
  }
}

file_sink::~file_sink() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool file_sink::open(const std::string& path, std::string* err) {
  path_ = path;
  bytes_ = 0;
  crc_ = 0;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  return fd_ >= 0 || fail(err, "cannot create", path, errno);
}

bool file_sink::write(const void* data, std::size_t n, std::string* err) {
  int injected = 0;
  if (fault_set && path_.find(fault.path_part) != std::string::npos &&
      bytes_ + n > fault.after_bytes) {
    injected = fault.error;
    n = std::size_t(fault.after_bytes > bytes_ ? fault.after_bytes - bytes_ : 0);
  }
  crc_ = crc32c_extend(crc_, data, n);
  const auto* p = static_cast<const char*>(data);
  constexpr std::size_t max_write = std::size_t(8) << 20; // the kernel's pace, not one huge call
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, std::min(n, max_write));
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return fail(err, "cannot write", path_, errno);
    }
    p += w;
    n -= std::size_t(w);
    bytes_ += std::uint64_t(w);
  }
  return injected == 0 || fail(err, "cannot write", path_, injected);
}

bool file_sink::close(std::string* err) {
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(err, "cannot fsync", path_, e);
  }
  return ::close(fd) == 0 || fail(err, "cannot close", path_, errno);
}

file_source::~file_source() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool file_source::open(const std::string& path, std::string* err) {
  path_ = path;
  offset_ = 0;
  crc_ = 0;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    return fail(err, "cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0)
    return fail(err, "cannot stat", path, errno);
  size_ = std::uint64_t(st.st_size);
  return true;
}

bool file_source::read(void* data, std::size_t n, std::string* err) {
  if (n > size_ - offset_) {
    if (err)
      *err = "'" + path_ + "' is truncated: " + std::to_string(size_) + " bytes, needs " +
             std::to_string(offset_ + n) + " or more";
    return false;
  }
  auto* p = static_cast<char*>(data);
  std::size_t left = n;
  while (left > 0) {
    const ssize_t r = ::read(fd_, p, left);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return fail(err, "cannot read", path_, errno);
    if (r == 0) {
      if (err)
        *err = "'" + path_ + "' shrank while being read";
      return false;
    }
    p += r;
    left -= std::size_t(r);
  }
  crc_ = crc32c_extend(crc_, data, n);
  offset_ += n;
  return true;
}

bool fsync_dir(const std::string& dir, std::string* err) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fail(err, "cannot open folder", dir, errno);
  const bool ok = ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  return ok || fail(err, "cannot fsync folder", dir, e);
}

bool write_file_atomic(const std::string& path, const std::string& text, std::string* err) {
  const std::string tmp = path + ".tmp";
  file_sink f;
  if (!f.open(tmp, err) || !f.write(text.data(), text.size(), err) || !f.close(err)) {
    std::error_code ec; // no partial tmp left behind (a folder of that name is not ours)
    if (!std::filesystem::is_directory(tmp, ec))
      std::filesystem::remove(tmp, ec);
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return fail(err, "cannot rename to", path, e);
  }
  auto parent = std::filesystem::path(path).parent_path().string();
  return fsync_dir(parent.empty() ? "." : parent, err);
}

bool read_text_file(const std::string& path, std::string* out, std::string* err) {
  file_source f;
  if (!f.open(path, err))
    return false;
  if (f.size() > (std::uint64_t(64) << 20)) {
    if (err)
      *err = "'" + path + "' is " + std::to_string(f.size()) + " bytes, more than a text file here may hold (64 MiB)";
    return false;
  }
  out->resize(f.size());
  return f.read(out->data(), out->size(), err);
}

} // namespace checkpoint
