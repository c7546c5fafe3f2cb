#include "data/byte_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "data/decoders.hpp"
#include "data/raw_input.hpp"

namespace data {

namespace {

using stream_detail::errno_text;
using stream_detail::shown_path;
using stream_detail::raw_input;
using stream_detail::stdin_shared;

compression sniff(const unsigned char* p, std::size_t n) {
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
    return compression::gzip;
  if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
    return compression::zstd;
  return compression::none;
}

class plain_stream final : public byte_stream {
public:
  plain_stream(std::string path, std::unique_ptr<raw_input> in)
      : byte_stream(std::move(path), compression::none), in_(std::move(in)) {}
  bool read(char* buf, std::size_t n, std::size_t* got, std::string* error) override {
    if (in_->read(buf, n, got))
      return true;
    *error = "cannot read " + shown_path(path_) + ": " + errno_text(errno);
    return false;
  }
  bool skip(std::uint64_t n, std::string* error) override {
    if (in_->is_stdin())
      return byte_stream::skip(n, error);
    static_assert(sizeof(long) >= 8, "files over 2 GiB need a 64-bit long");
    if (std::fseek(in_->file(), static_cast<long>(n), SEEK_CUR) == 0)
      return true;
    *error = "cannot read " + shown_path(path_) + ": " + errno_text(errno);
    return false;
  }

private:
  std::unique_ptr<raw_input> in_;
};

} // namespace

const char* to_string(compression c) {
  switch (c) {
  case compression::gzip:
    return "gzip";
  case compression::zstd:
    return "zstd";
  default:
    return "plain";
  }
}

bool byte_stream::skip(std::uint64_t n, std::string* error) {
  std::vector<char> scratch(std::size_t(1) << 16);
  while (n > 0) {
    std::size_t got = 0;
    if (!read(scratch.data(), static_cast<std::size_t>(std::min<std::uint64_t>(n, scratch.size())), &got, error))
      return false;
    if (got == 0) {
      *error = shown_path(path_) + ": the data got shorter while it was being read";
      return false;
    }
    n -= got;
  }
  return true;
}

std::unique_ptr<byte_stream> open_stream(const std::string& path, std::string* error, bool probe) {
  std::unique_ptr<raw_input> in;
  if (is_stdin(path)) {
    if (!probe) {
      if (stdin_shared().taken) {
        *error = "standard input ('-') was already read: it can be read once only (one pass, one "
                 "reader; not with train.epochs > 1, nor as two inputs)";
        return nullptr;
      }
      stdin_shared().taken = true;
    }
    in = std::make_unique<raw_input>(stdin, true, probe);
  } else {
    std::FILE* fp = std::fopen(path.c_str(), "rb");
    if (!fp) {
      *error = "cannot open '" + path + "': " + errno_text(errno);
      return nullptr;
    }
    std::setvbuf(fp, nullptr, _IONBF, 0); // we read in large chunks ourselves
    in = std::make_unique<raw_input>(fp, false, false);
  }
  // The magic bytes: read through the raw input (stdin keeps them in its
  // replay), then the stream starts over from byte 0.
  unsigned char magic[4] = {};
  std::size_t have = 0;
  if (is_stdin(path)) {
    auto& seen = stdin_shared().seen;
    while (seen.size() < 4 && !std::feof(stdin) && !std::ferror(stdin)) {
      char c[4];
      const std::size_t got = std::fread(c, 1, 4 - seen.size(), stdin);
      seen.append(c, got);
    }
    have = std::min<std::size_t>(seen.size(), 4);
    std::memcpy(magic, seen.data(), have);
  } else {
    have = std::fread(magic, 1, 4, in->file());
    if (std::fseek(in->file(), 0, SEEK_SET) != 0) {
      *error = "cannot read '" + path + "': " + errno_text(errno);
      return nullptr;
    }
  }
  switch (sniff(magic, have)) {
  case compression::gzip:
    return stream_detail::open_gzip(path, std::move(in));
  case compression::zstd:
    return stream_detail::open_zstd(path, std::move(in));
  default:
    return std::make_unique<plain_stream>(path, std::move(in));
  }
}

compression sniff_compression(const std::string& path) {
  if (is_stdin(path))
    return compression::none;
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp)
    return compression::none;
  unsigned char magic[4] = {};
  const std::size_t have = std::fread(magic, 1, 4, fp);
  std::fclose(fp);
  return sniff(magic, have);
}

} // namespace data
