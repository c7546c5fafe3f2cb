#pragma once
// A checkpoint data file (array_file.hpp format) held as the sources of its
// bytes instead of written: the magic, header length and header, then the
// arrays straight from the caller's buffers (or from arrays the image owns).
// read() copies any byte range, so a file can travel in pieces (an embedding
// shard's model file in a multi-node export: actors/embedding_shard_export.cpp,
// cluster/shard_fetch.hpp) and be written elsewhere with exactly the bytes
// write_array_file() would write here.
//
// Not thread-safe. Borrowed buffers must outlive the image and not change
// while it is read (the shards' tables after training: quiescent).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/array_file.hpp"

namespace checkpoint {

class file_image {
public:
  file_image() = default;
  // data[i] holds header.arrays[i].count floats (borrowed).
  // Pre: data.size() == header.arrays.size().
  file_image(std::string name, const file_header& header, const std::vector<const float*>& data);
  // The same, owning the arrays: owned[i].size() == header.arrays[i].count.
  file_image(std::string name, const file_header& header, std::vector<std::vector<float>> owned);
  file_image(file_image&&) = default;
  file_image& operator=(file_image&&) = default;
  file_image(const file_image&) = delete;
  file_image& operator=(const file_image&) = delete;

  // The file's name in a checkpoint folder (embedding-S.bin, dynamic-S.bin).
  const std::string& name() const { return name_; }
  // Bytes in the file.
  std::uint64_t size() const { return size_; }
  // Copies the file's bytes [offset, offset + n) to out.
  // Pre: offset + n <= size().
  void read(std::uint64_t offset, void* out, std::size_t n) const;
  // The CRC32C of the whole file (checkpoint/crc32c.hpp), as a file_sink
  // writing it would count.
  std::uint32_t crc32c() const;

private:
  struct part {
    const char* data = nullptr;
    std::uint64_t bytes = 0;
  };
  void add_arrays(const file_header& header, const std::vector<const float*>& data);
  std::string name_;
  std::string head_;          // magic, header length, header
  std::vector<part> arrays_;  // after head_, in order
  std::vector<std::vector<float>> owned_; // (moving the image keeps their buffers)
  std::uint64_t size_ = 0;
};

} // namespace checkpoint
