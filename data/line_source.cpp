#include "data/line_source.hpp"

#include "data/byte_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace data {

line_source::line_source(std::size_t chunk_bytes) : buf_(std::max<std::size_t>(chunk_bytes, 1)) {}

line_source::~line_source() { close(); }

void line_source::close() { stream_.reset(); }

bool line_source::open(const std::string& path, std::uint64_t size, std::uint64_t line_start,
                       std::uint64_t begin, std::string* error) {
  close();
  path_ = path;
  size_ = size;
  deferred_error_.clear();
  stream_ = open_stream(path, error);
  if (!stream_)
    return false;
  // Starting mid-file: our first line follows the first '\n' at or after
  // begin-1, i.e. it is the first line beginning at or after begin.
  skipping_ = begin > line_start;
  const std::uint64_t from = skipping_ ? begin - 1 : begin;
  if (from > 0 && !stream_->skip(from, error)) {
    close();
    return false;
  }
  buf_off_ = read_off_ = from;
  beg_ = end_ = 0;
  eof_ = read_off_ >= size_;
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
  // Fill the buffer (a decoder hands out less than asked): fewer, larger
  // chunks for the line scan.
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size() - end_, size_ - read_off_));
  if (!deferred_error_.empty()) {
    *error = deferred_error_;
    return false;
  }
  std::size_t have = 0;
  while (have < want) {
    std::size_t got = 0;
    if (!stream_->read(buf_.data() + end_ + have, want - have, &got, error)) {
      if (have == 0)
        return false;
      // Corrupt or cut-short data: hand out the lines decoded before it
      // first, so that the error comes at the line it reached.
      deferred_error_ = *error;
      error->clear();
      break;
    }
    if (got == 0)
      break;
    have += got;
  }
  if (!deferred_error_.empty()) {
    end_ += have;
    read_off_ += have;
    return true;
  }
  end_ += have;
  read_off_ += have;
  if (have < want) {
    if (size_ != unknown_size) {
      *error = "'" + path_ + "': the file got shorter while it was being read";
      return false;
    }
    eof_ = true; // the end of data of unknown size
  }
  if (read_off_ >= size_)
    eof_ = true;
  return true;
}

line_source::status line_source::next(line* out, std::string* error) {
  for (;;) {
    const char* const base = buf_.data();
    const char* const b = base + beg_;
    const char* const e = base + end_;
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', static_cast<std::size_t>(e - b)));
    const bool eof = eof_;
    if (skipping_) { // discard the line that belongs to the previous part
      if (!nl) {
        beg_ = end_;
        if (eof) {
          first_line_off_ = read_off_;
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

bool probe_file(const std::string& path, bool want_first_line, bool measure_compressed, std::uint64_t* size,
                std::string* first_line, bool* has_newline, std::string* error) {
  std::error_code ec;
  if (!is_stdin(path) && std::filesystem::is_directory(path, ec)) {
    *error = "cannot read '" + path + "': it is a directory";
    return false;
  }
  *has_newline = false;
  auto stream = open_stream(path, error, /*probe=*/true);
  if (!stream)
    return false;
  const bool plain = stream->kind() == compression::none;
  if (is_stdin(path) || (!plain && !measure_compressed)) {
    *size = line_source::unknown_size;
  } else if (plain) {
    *size = std::filesystem::file_size(path, ec);
    if (ec) {
      *error = "cannot read '" + path + "': " + ec.message();
      return false;
    }
  }
  const bool measure = !plain && measure_compressed && !is_stdin(path);
  std::uint64_t total = 0;
  std::vector<char> chunk(std::size_t(1) << 16);
  bool in_first = want_first_line;
  while (in_first || measure) {
    std::size_t got = 0;
    if (!stream->read(chunk.data(), chunk.size(), &got, error))
      return false;
    if (got == 0)
      break;
    total += got;
    if (in_first) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data(), '\n', got));
      first_line->append(chunk.data(), nl ? static_cast<std::size_t>(nl - chunk.data()) : got);
      if (nl) {
        *has_newline = true;
        in_first = false;
      } else if (first_line->size() > line_source::max_line_bytes) {
        in_first = false; // the reader reports the long line
      }
    }
  }
  if (measure)
    *size = total;
  return true;
}

bool count_newlines(const std::string& path, std::uint64_t end, std::uint64_t* count) {
  if (is_stdin(path))
    return false; // read once: not again to count
  std::string error;
  auto stream = open_stream(path, &error);
  if (!stream)
    return false;
  // (no bigger than what is counted: the line number of an error near a
  // part's start costs a few bytes, not a zeroed MiB)
  std::vector<char> chunk(static_cast<std::size_t>(std::clamp<std::uint64_t>(end, 1, std::uint64_t(1) << 20)));
  std::uint64_t newlines = 0, left = end;
  while (left > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), left));
    std::size_t got = 0;
    if (!stream->read(chunk.data(), want, &got, &error) || got == 0)
      break;
    newlines += static_cast<std::uint64_t>(std::count(chunk.data(), chunk.data() + got, '\n'));
    left -= got;
  }
  *count = newlines;
  return left == 0;
}

} // namespace data
