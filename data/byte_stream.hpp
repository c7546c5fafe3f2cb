#pragma once
// The bytes of one input: a plain file, a gzip or zstd file decompressed on
// the fly, or standard input ("-", also decompressed when it is compressed).
//
// Compression is recognised by the first bytes, never by the name:
//   gzip: 1f 8b (several concatenated members are read one after another);
//   zstd: 28 b5 2f fd (several frames likewise; skippable frames skipped).
// Anything else is read as it is.
//
// Errors are values: open_stream() and read() return false with *error
// naming the file and what was expected, e.g. "'a.gz': the gzip data is
// truncated: the file ends inside a compressed member (expected more
// compressed data)". The reader adds the line it had reached.
//
// Standard input can be read once per process: the first stream that reads
// past what a probe (the header line) took gets it; a later open_stream("-")
// for data fails with "standard input ('-') was already read ...".
// Not thread-safe across streams on "-"; distinct file streams share nothing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace data {

enum class compression { none, gzip, zstd };
const char* to_string(compression c); // "plain", "gzip", "zstd"

// The path that means standard input.
inline bool is_stdin(const std::string& path) { return path == "-"; }

class byte_stream {
public:
  virtual ~byte_stream() = default;
  // Up to `n` bytes into `buf`; *got == 0 only at the end of the data.
  // False with *error set on an I/O error or corrupt / truncated data.
  virtual bool read(char* buf, std::size_t n, std::size_t* got, std::string* error) = 0;
  // Skips `n` bytes of data (a seek for a plain file, read and dropped
  // otherwise). False with *error set if the data ends first or on error.
  virtual bool skip(std::uint64_t n, std::string* error);
  compression kind() const { return kind_; }
  const std::string& path() const { return path_; }

protected:
  byte_stream(std::string path, compression kind) : path_(std::move(path)), kind_(kind) {}
  std::string path_;
  compression kind_;
};

// Opens `path` ("-": standard input for data; see above). `probe` streams
// (header lines, size checks) on "-" keep what they read for the data stream.
std::unique_ptr<byte_stream> open_stream(const std::string& path, std::string* error, bool probe = false);

// The compression of `path` from its first bytes (none when unreadable or
// shorter; "-" reports none without reading).
compression sniff_compression(const std::string& path);

} // namespace data
