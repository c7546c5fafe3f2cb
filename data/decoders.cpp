// The gzip and zstd streams of open_stream() (byte_stream.hpp): compressed
// bytes in through a raw_input, with their own buffer; several gzip members
// or zstd frames are read one after another. Truncated and corrupt data are
// errors naming the file.
#include "data/decoders.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <zlib.h>
#include <zstd.h>

namespace data::stream_detail {

namespace {

// Shared by the two decoders: compressed bytes in, with their own buffer.
class decoder_base : public byte_stream {
protected:
  decoder_base(std::string path, compression kind, std::unique_ptr<raw_input> in)
      : byte_stream(std::move(path), kind), in_(std::move(in)), buf_(std::size_t(1) << 17) {}
  // Refills buf_ when empty; false on an I/O error.
  bool refill(std::size_t* got, std::string* error) {
    if (!in_->read(buf_.data(), buf_.size(), got)) {
      *error = "cannot read " + shown_path(path_) + ": " + errno_text(errno);
      return false;
    }
    eof_ = *got == 0;
    return true;
  }
  std::string truncated() const {
    return "the " + std::string(to_string(kind_)) + " data of " + shown_path(path_) +
           " is truncated: it ends inside a compressed " + (kind_ == compression::gzip ? "member" : "frame") +
           " (expected more compressed data; an interrupted download or copy?)";
  }
  std::string corrupt(const char* why) const {
    return "the " + std::string(to_string(kind_)) + " data of " + shown_path(path_) + " is corrupt (" + why +
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

std::unique_ptr<byte_stream> open_gzip(std::string path, std::unique_ptr<raw_input> in) {
  return std::make_unique<gzip_stream>(std::move(path), std::move(in));
}

std::unique_ptr<byte_stream> open_zstd(std::string path, std::unique_ptr<raw_input> in) {
  return std::make_unique<zstd_stream>(std::move(path), std::move(in));
}

} // namespace data::stream_detail
