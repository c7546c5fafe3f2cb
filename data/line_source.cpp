#include "data/line_source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace data {

namespace {

std::string errno_text(int err) { return err ? std::strerror(err) : "unknown error"; }

bool seek(std::FILE* fp, std::uint64_t offset) {
  // std::fseek takes a long: 64 bits on the LP64 platforms we build for.
  static_assert(sizeof(long) >= 8, "files over 2 GiB need a 64-bit long");
  return std::fseek(fp, static_cast<long>(offset), SEEK_SET) == 0;
}

} // namespace

line_source::line_source(std::size_t chunk_bytes) : buf_(std::max<std::size_t>(chunk_bytes, 1)) {}

line_source::~line_source() { close(); }

void line_source::close() {
  if (fp_)
    std::fclose(fp_);
  fp_ = nullptr;
}

bool line_source::open(const std::string& path, std::uint64_t size, std::uint64_t line_start,
                       std::uint64_t begin, std::string* error) {
  close();
  path_ = path;
  size_ = size;
  fp_ = std::fopen(path.c_str(), "rb");
  if (!fp_) {
    *error = "cannot open '" + path + "': " + errno_text(errno);
    return false;
  }
  std::setvbuf(fp_, nullptr, _IONBF, 0); // we read in large chunks ourselves
  // Starting mid-file: our first line follows the first '\n' at or after
  // begin-1, i.e. it is the first line beginning at or after begin.
  skipping_ = begin > line_start;
  const std::uint64_t from = skipping_ ? begin - 1 : begin;
  if (!seek(fp_, from)) {
    *error = "cannot read '" + path + "': " + errno_text(errno);
    close();
    return false;
  }
  buf_off_ = read_off_ = from;
  beg_ = end_ = 0;
  first_line_off_ = begin;
  return true;
}

bool line_source::refill(std::string* error) {
  if (beg_ > 0) { // keep the partial line, at the front
    std::memmove(buf_.data(), buf_.data() + beg_, end_ - beg_);
    buf_off_ += beg_;
    end_ -= beg_;
    beg_ = 0;
  }
  if (end_ == buf_.size())
    buf_.resize(buf_.size() * 2); // a line longer than the buffer
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size() - end_, size_ - read_off_));
  const std::size_t got = std::fread(buf_.data() + end_, 1, want, fp_);
  if (got != want) {
    *error = std::ferror(fp_) ? "cannot read '" + path_ + "': " + errno_text(errno)
                              : path_ + ": the file got shorter while it was being read";
    return false;
  }
  end_ += got;
  read_off_ += got;
  return true;
}

line_source::status line_source::next(line* out, std::string* error) {
  for (;;) {
    const char* const base = buf_.data();
    const char* const b = base + beg_;
    const char* const e = base + end_;
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', static_cast<std::size_t>(e - b)));
    const bool eof = read_off_ >= size_;
    if (skipping_) { // discard the line that belongs to the previous part
      if (!nl) {
        beg_ = end_;
        if (eof) {
          first_line_off_ = size_;
          return status::end;
        }
        if (!refill(error))
          return status::error;
        continue;
      }
      beg_ = static_cast<std::size_t>(nl - base) + 1;
      skipping_ = false;
      first_line_off_ = buf_off_ + beg_;
      continue;
    }
    if (nl ? std::size_t(nl - b) > max_line_bytes : std::size_t(e - b) > max_line_bytes)
      return status::too_long;
    if (!nl) {
      if (!eof) {
        if (!refill(error))
          return status::error;
        continue;
      }
      if (b == e)
        return status::end;
      nl = e; // last line without a newline
    }
    out->begin = buf_off_ + beg_;
    beg_ = nl == e ? end_ : static_cast<std::size_t>(nl - base) + 1;
    out->end = buf_off_ + beg_;
    std::size_t len = static_cast<std::size_t>(nl - b);
    if (len > 0 && b[len - 1] == '\r')
      --len;
    out->text = std::string_view(b, len);
    return status::line;
  }
}

bool probe_file(const std::string& path, bool want_first_line, std::uint64_t* size, std::string* first_line,
                bool* has_newline, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "cannot read '" + path + "': it is a directory";
    return false;
  }
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) {
    *error = "cannot open '" + path + "': " + errno_text(errno);
    return false;
  }
  bool ok = std::fseek(fp, 0, SEEK_END) == 0;
  const long end = ok ? std::ftell(fp) : -1;
  ok = end >= 0 && seek(fp, 0);
  *size = ok ? static_cast<std::uint64_t>(end) : 0;
  *has_newline = false;
  if (ok && want_first_line) {
    char chunk[1 << 16];
    while (first_line->size() < *size) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof chunk, *size - first_line->size()));
      if (std::fread(chunk, 1, want, fp) != want) {
        ok = false;
        break;
      }
      const char* nl = static_cast<const char*>(std::memchr(chunk, '\n', want));
      first_line->append(chunk, nl ? static_cast<std::size_t>(nl - chunk) : want);
      if (nl) {
        *has_newline = true;
        break;
      }
    }
  }
  if (!ok)
    *error = "cannot read '" + path + "': " + errno_text(errno);
  std::fclose(fp);
  return ok;
}

bool count_newlines(const std::string& path, std::uint64_t end, std::uint64_t* count) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp)
    return false;
  std::vector<char> chunk(std::size_t(1) << 20);
  std::uint64_t newlines = 0, left = end;
  while (left > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), left));
    if (std::fread(chunk.data(), 1, want, fp) != want)
      break;
    newlines += static_cast<std::uint64_t>(std::count(chunk.data(), chunk.data() + want, '\n'));
    left -= want;
  }
  std::fclose(fp);
  *count = newlines;
  return left == 0;
}

} // namespace data
