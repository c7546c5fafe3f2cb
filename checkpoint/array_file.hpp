#pragma once
// One checkpoint data file: a header, then float arrays.
//
// Layout (all little-endian):
//   8 bytes   magic "SSCKPT1\n"
//   8 bytes   header length H (uint64)
//   H bytes   file_header, Cereal portable binary (structured part)
//   arrays    raw float32, in the header's order and lengths, nothing after
// The arrays are streamed straight from and into the caller's buffers (no
// second in-memory copy of a table). The wire format (messages/, CAF
// `inspect`) is separate and may change without touching this one.
//
// kind and attrs say what the file holds, for example an embedding shard:
//   kind "embedding", attrs {tables, rows_per_table, dim, state_per_row,
//   shard, num_shards, local_rows}, arrays weights[tables * local_rows * dim]
//   and state[tables * local_rows * state_per_row]; local row l of table t is
//   global row l * num_shards + shard (rows are dealt round-robin).
// The loader checks the magic, the header, the kind, each array's name and
// length (against the file's size, and against what the caller needs before
// a float is read) and that nothing follows the last array; every failure
// names the file and what was expected.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/file_io.hpp"

namespace checkpoint {

constexpr std::uint32_t file_format_version = 1;

struct array_spec {
  std::string name;
  std::uint64_t count = 0; // floats
};

struct file_header {
  std::uint32_t version = file_format_version;
  std::string kind;
  std::map<std::string, std::uint64_t> attrs;
  std::vector<array_spec> arrays;
  // Cereal save/load live in array_file.cpp: every length read from a file
  // is bounded before anything is allocated for it.
  std::uint64_t attr(const std::string& key) const; // 0 when absent
};

// What a written file weighs, for the manifest.
struct file_info {
  std::string name; // relative to the checkpoint folder
  std::uint64_t bytes = 0;
  std::uint32_t crc32c = 0;
};

// Writes `path` (fsynced) with `header` and the arrays data[i] of
// header.arrays[i].count floats each.
bool write_array_file(const std::string& path, const file_header& header,
                      const std::vector<const float*>& data, file_info* info, std::string* err);

// For writers that stream the arrays themselves: the magic, the header's
// length and the header, into an open sink. The caller then writes exactly
// the arrays the header lists, in order, and closes the sink.
bool write_array_header(file_sink& f, const file_header& header, std::string* err);
// The bytes write_array_header() writes (checkpoint/file_image.hpp).
std::string array_header_bytes(const file_header& header);

// Reads a file written by write_array_file, array by array, in order.
class array_file_reader {
public:
  // Opens and parses the header; `kind` must match.
  bool open(const std::string& path, const std::string& kind, std::string* err);
  const file_header& header() const { return header_; }
  // The header's arrays are exactly `want` (names, order and lengths), else
  // an error naming the file, the array, its length and what `whom` (e.g.
  // "the model") needs. Loaders call it before they place anything.
  bool expect_arrays(const std::vector<array_spec>& want, const std::string& whom,
                     std::string* err) const;
  // The next array, which must be named `name` and hold exactly `count`
  // floats (else an error, nothing read), into dst[0, count).
  bool read(const std::string& name, float* dst, std::uint64_t count, std::string* err);
  // Every array of `want`, in order, each into its own vector of out
  // (resized to want.size(), each to its count); call expect_arrays first.
  bool read_all(const std::vector<array_spec>& want, std::vector<std::vector<float>>* out,
                std::string* err);
  // Reads the next array `name` of exactly `count` floats in pieces of
  // `chunk` floats into `buf`, calling sink(offset, buf, n) for each
  // (re-splitting rows without holding a second copy of the array).
  template <class Sink>
  bool read_chunked(const std::string& name, std::uint64_t count, std::vector<float>& buf,
                    std::size_t chunk, Sink&& sink, std::string* err);
  // After the last array: nothing may follow. Returns the CRC32C of the file.
  bool finish(std::uint32_t* crc, std::string* err);
  const std::string& path() const { return src_.path(); }
  std::uint64_t size() const { return src_.size(); }

private:
  // The next array, which must be `name` of `count` floats.
  bool next_array(const std::string& name, std::uint64_t count, std::string* err);
  file_source src_;
  file_header header_;
  std::size_t next_ = 0;
};

template <class Sink>
bool array_file_reader::read_chunked(const std::string& name, std::uint64_t count,
                                     std::vector<float>& buf, std::size_t chunk, Sink&& sink,
                                     std::string* err) {
  if (!next_array(name, count, err))
    return false;
  buf.resize(chunk);
  for (std::uint64_t off = 0; off < count;) {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(chunk, count - off));
    if (!src_.read(buf.data(), n * sizeof(float), err))
      return false;
    sink(off, buf.data(), n);
    off += n;
  }
  return true;
}

} // namespace checkpoint
