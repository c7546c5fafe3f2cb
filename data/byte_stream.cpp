#include "data/byte_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <zlib.h>
#include <zstd.h>

namespace data {

namespace {

std::string errno_text(int err) { return err ? std::strerror(err) : "unknown error"; }
std::string quoted(const std::string& path) { return is_stdin(path) ? "standard input ('-')" : "'" + path + "'"; }

compression sniff(const unsigned char* p, std::size_t n) {
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
    return compression::gzip;
  if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
    return compression::zstd;
  return compression::none;
}

// Standard input, shared by every stream on "-": what probes read is kept
// in `seen` and replayed to the one data stream, which then reads on.
struct stdin_state {
  std::string seen;   // bytes read from the descriptor so far (by probes)
  bool taken = false; // a data stream has it
};
stdin_state& stdin_shared() {
  static stdin_state s;
  return s;
}

// Raw bytes: a FILE*, or standard input with its replayed prefix.
class raw_input {
public:
  raw_input(std::FILE* fp, bool is_stdin, bool probe) : fp_(fp), stdin_(is_stdin), probe_(probe) {}
  ~raw_input() {
    if (fp_ && !stdin_)
      std::fclose(fp_);
  }
  raw_input(const raw_input&) = delete;
  raw_input& operator=(const raw_input&) = delete;
  // false on an I/O error (errno kept); *got == 0 at the end.
  bool read(char* buf, std::size_t n, std::size_t* got) {
    if (stdin_) {
      const std::string& seen = stdin_shared().seen;
      if (replayed_ < seen.size()) {
        *got = std::min(n, seen.size() - replayed_);
        std::memcpy(buf, seen.data() + replayed_, *got);
        replayed_ += *got;
        return true;
      }
    }
    *got = std::fread(buf, 1, n, fp_);
    if (*got == 0 && std::ferror(fp_))
      return false;
    if (stdin_ && probe_) { // a later stream replays this
      stdin_shared().seen.append(buf, *got);
      replayed_ += *got;
    }
    return true;
  }
  std::FILE* file() const { return fp_; }
  bool is_stdin() const { return stdin_; }

private:
  std::FILE* fp_;
  bool stdin_, probe_;
  std::size_t replayed_ = 0;
};

class plain_stream final : public byte_stream {
public:
  plain_stream(std::string path, std::unique_ptr<raw_input> in)
      : byte_stream(std::move(path), compression::none), in_(std::move(in)) {}
  bool read(char* buf, std::size_t n, std::size_t* got, std::string* error) override {
    if (in_->read(buf, n, got))
      return true;
    *error = "cannot read " + quoted(path_) + ": " + errno_text(errno);
    return false;
  }
  bool skip(std::uint64_t n, std::string* error) override {
    if (in_->is_stdin())
      return byte_stream::skip(n, error);
    static_assert(sizeof(long) >= 8, "files over 2 GiB need a 64-bit long");
    if (std::fseek(in_->file(), static_cast<long>(n), SEEK_CUR) == 0)
      return true;
    *error = "cannot read " + quoted(path_) + ": " + errno_text(errno);
    return false;
  }

private:
  std::unique_ptr<raw_input> in_;
};

// Shared by the two decoders: compressed bytes in, with their own buffer.
class decoder_base : public byte_stream {
protected:
  decoder_base(std::string path, compression kind, std::unique_ptr<raw_input> in)
      : byte_stream(std::move(path), kind), in_(std::move(in)), buf_(std::size_t(1) << 17) {}
  // Refills buf_ when empty; false on an I/O error.
  bool refill(std::size_t* got, std::string* error) {
    if (!in_->read(buf_.data(), buf_.size(), got)) {
      *error = "cannot read " + quoted(path_) + ": " + errno_text(errno);
      return false;
    }
    eof_ = *got == 0;
    return true;
  }
  std::string truncated() const {
    return "the " + std::string(to_string(kind_)) + " data of " + quoted(path_) +
           " is truncated: it ends inside a compressed " + (kind_ == compression::gzip ? "member" : "frame") +
           " (expected more compressed data; an interrupted download or copy?)";
  }
  std::string corrupt(const char* why) const {
    return "the " + std::string(to_string(kind_)) + " data of " + quoted(path_) + " is corrupt (" + why +
           "): expected valid " + to_string(kind_) + " data";
  }
  std::unique_ptr<raw_input> in_;
  std::vector<char> buf_;
  bool eof_ = false;
};

class gzip_stream final : public decoder_base {
public:
  gzip_stream(std::string path, std::unique_ptr<raw_input> in)
      : decoder_base(std::move(path), compression::gzip, std::move(in)) {
    std::memset(&z_, 0, sizeof z_);
    ok_ = inflateInit2(&z_, 15 + 16) == Z_OK; // 16: gzip wrapper only
  }
  ~gzip_stream() override {
    if (ok_)
      inflateEnd(&z_);
  }
  bool read(char* buf, std::size_t n, std::size_t* got, std::string* error) override {
    if (!ok_) {
      *error = corrupt("zlib could not start");
      return false;
    }
    n = std::min<std::size_t>(n, 1u << 30); // avail_out is 32 bits
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(n);
    while (z_.avail_out == n) {
      if (z_.avail_in == 0 && !eof_) {
        std::size_t in = 0;
        if (!refill(&in, error))
          return false;
        z_.next_in = reinterpret_cast<Bytef*>(buf_.data());
        z_.avail_in = static_cast<uInt>(in);
      }
      if (member_done_) { // the end, or another member follows
        if (z_.avail_in == 0 && eof_)
          break;
        inflateReset(&z_);
        member_done_ = false;
      }
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END)
        member_done_ = true;
      else if (rc == Z_BUF_ERROR && z_.avail_in == 0 && eof_) {
        *error = truncated();
        return false;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        *error = corrupt(z_.msg ? z_.msg : "zlib error");
        return false;
      }
    }
    *got = n - z_.avail_out;
    return true;
  }

private:
  z_stream z_;
  bool ok_ = false;
  bool member_done_ = false;
};

class zstd_stream final : public decoder_base {
public:
  zstd_stream(std::string path, std::unique_ptr<raw_input> in)
      : decoder_base(std::move(path), compression::zstd, std::move(in)), ds_(ZSTD_createDStream()) {
    if (ds_)
      ZSTD_initDStream(ds_);
  }
  ~zstd_stream() override { ZSTD_freeDStream(ds_); }
  bool read(char* buf, std::size_t n, std::size_t* got, std::string* error) override {
    if (!ds_) {
      *error = corrupt("libzstd could not start");
      return false;
    }
    ZSTD_outBuffer out{buf, n, 0};
    for (;;) {
      if (in_buf_.pos == in_buf_.size && !eof_) {
        std::size_t in = 0;
        if (!refill(&in, error))
          return false;
        in_buf_ = ZSTD_inBuffer{buf_.data(), in, 0};
      }
      const std::size_t in_before = in_buf_.pos;
      const std::size_t r = ZSTD_decompressStream(ds_, &out, &in_buf_);
      if (ZSTD_isError(r)) {
        *error = corrupt(ZSTD_getErrorName(r));
        return false;
      }
      // 0: a frame is complete and flushed. A call without input or output
      // (at the end) only hints at the next frame's header: not a state.
      if (out.pos > 0 || in_buf_.pos != in_before)
        frame_done_ = r == 0;
      if (out.pos > 0)
        break;
      if (in_buf_.pos == in_buf_.size && eof_) {
        if (!frame_done_) {
          *error = truncated();
          return false;
        }
        break;
      }
    }
    *got = out.pos;
    return true;
  }

private:
  ZSTD_DStream* ds_;
  ZSTD_inBuffer in_buf_{nullptr, 0, 0};
  bool frame_done_ = false;
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
      *error = quoted(path_) + ": the data got shorter while it was being read";
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
    return std::make_unique<gzip_stream>(path, std::move(in));
  case compression::zstd:
    return std::make_unique<zstd_stream>(path, std::move(in));
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
