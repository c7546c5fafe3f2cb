#pragma once
// Chunked line input from one file, and the small file probes the reader
// needs at open(). The file I/O half of data::reader (see reader.hpp).
//
// line_source reads a file (plain, gzip or zstd, or standard input "-"; see
// byte_stream.hpp) from a byte offset of its data with large reads into one
// reused buffer, and hands out lines as views into that buffer:
// no copy, no allocation per line. The buffer grows only for a line longer
// than itself, and never past max_line_bytes: a longer line (a binary file,
// a file without newlines) is status::too_long, not an unbounded buffer.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace data {

class byte_stream;

class line_source {
public:
  struct line {
    std::string_view text; // without the '\n' and a '\r' before it; valid until the next call
    std::uint64_t begin = 0; // data offset of the line's first byte (decompressed)
    std::uint64_t end = 0;   // data offset just past its '\n' (or the end of the data)
  };
  enum class status { line, end, error, too_long };
  // The longest line accepted, '\n' excluded (a Criteo line has about 200
  // bytes; a line of 100 multi-hot ids some kilobytes).
  static constexpr std::size_t max_line_bytes = std::size_t(1) << 20;
  // A size not known in advance (compressed data, standard input): read to
  // the end of the data.
  static constexpr std::uint64_t unknown_size = ~std::uint64_t(0);

  explicit line_source(std::size_t chunk_bytes);
  ~line_source();
  line_source(const line_source&) = delete;
  line_source& operator=(const line_source&) = delete;

  // Opens `path`, whose data must hold `size` bytes (or unknown_size). The
  // first line returned is the first beginning at or after `begin`; `begin`
  // == `line_start` means that offset is known to start a line (file or data
  // start). Reads stop at `size`. Compressed data before `begin` is
  // decompressed and dropped. False with *error naming the file on failure.
  bool open(const std::string& path, std::uint64_t size, std::uint64_t line_start, std::uint64_t begin,
            std::string* error);
  void close();
  bool is_open() const { return stream_ != nullptr; }

  // The next line, or end of file, or an I/O error (*error names the file),
  // or too_long: the next line has more than max_line_bytes (the source
  // stays where it was; the caller stops).
  status next(line* out, std::string* error);

  // Offset of the first line this source returns (known once next() has
  // returned a line or the end).
  std::uint64_t first_line_offset() const { return first_line_off_; }

private:
  bool refill(std::string* error);

  std::string path_;
  std::unique_ptr<byte_stream> stream_;
  bool eof_ = false;              // the stream has no more bytes
  std::string deferred_error_;    // a read error after the bytes now in buf_
  std::vector<char> buf_;
  std::size_t beg_ = 0, end_ = 0; // unread bytes are buf_[beg_, end_)
  std::uint64_t buf_off_ = 0;     // file offset of buf_[0]
  std::uint64_t read_off_ = 0;    // file offset of the next read
  std::uint64_t size_ = 0;
  bool skipping_ = false;         // discarding the line before our first
  std::uint64_t first_line_off_ = 0;
};

// Size of `path`'s data and, when want_first_line, its first line (without
// '\n'; *has_newline says whether one followed). The size of compressed data
// is found by decompressing it all when measure_compressed, else it is
// unknown_size, as for standard input (which is never measured: "-" is read
// once). False with *error naming the file ("cannot open 'x.tsv': No such
// file or directory") on failure.
bool probe_file(const std::string& path, bool want_first_line, bool measure_compressed, std::uint64_t* size,
                std::string* first_line, bool* has_newline, std::string* error);

// Number of '\n' in the first `end` bytes of `path`'s data; false if unreadable.
bool count_newlines(const std::string& path, std::uint64_t end, std::uint64_t* count);

} // namespace data
