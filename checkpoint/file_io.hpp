#pragma once
// Checksummed POSIX file I/O for checkpoints. Errors are values: every
// function returns false and sets *err to a message naming the file, e.g.
// "cannot write 'ckpt/embedding-0.bin': No space left on device".
//
// file_sink writes a new file (truncating), counting bytes and CRC32C, and
// close() fsyncs it: after close() returns true the bytes are on disk.
// file_source reads exactly the bytes asked for and keeps the CRC32C of
// everything read so far. Neither buffers: callers pass large spans (rows
// are written straight from the tables, never copied).
#include <cstddef>
#include <cstdint>
#include <string>

namespace checkpoint {

class file_sink {
public:
  file_sink() = default;
  file_sink(const file_sink&) = delete;
  file_sink& operator=(const file_sink&) = delete;
  ~file_sink(); // closes without fsync if close() was not called

  bool open(const std::string& path, std::string* err);
  bool write(const void* data, std::size_t n, std::string* err);
  bool close(std::string* err); // fsync + close
  std::uint64_t bytes() const { return bytes_; }
  std::uint32_t crc() const { return crc_; }
  const std::string& path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
  std::uint64_t bytes_ = 0;
  std::uint32_t crc_ = 0;
};

class file_source {
public:
  file_source() = default;
  file_source(const file_source&) = delete;
  file_source& operator=(const file_source&) = delete;
  ~file_source();

  bool open(const std::string& path, std::string* err);
  // Exactly n bytes, or false: "'x.bin' is truncated: ..." at the end of file.
  bool read(void* data, std::size_t n, std::string* err);
  std::uint64_t size() const { return size_; }  // at open()
  std::uint64_t offset() const { return offset_; }
  std::uint32_t crc() const { return crc_; }     // of the bytes read so far
  const std::string& path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
  std::uint64_t size_ = 0, offset_ = 0;
  std::uint32_t crc_ = 0;
};

// fsync of a directory (after creating, renaming or removing entries in it).
bool fsync_dir(const std::string& dir, std::string* err);

// Writes `text` to `path` atomically: path.tmp, fsync, rename, fsync of the
// folder.
bool write_file_atomic(const std::string& path, const std::string& text, std::string* err);

// The whole file as text (manifest.json, LATEST); false with *err naming it.
bool read_text_file(const std::string& path, std::string* out, std::string* err);

// Test seam (LevelDB's Env, narrowed to the one fault tests need): while a
// fault is set, file_sink::write to a path containing `path_part` writes up
// to `after_bytes` bytes of the file and then fails with `error` (ENOSPC: a
// full disk). Set and cleared by tests, not while files are being written.
struct write_fault {
  std::string path_part;
  std::uint64_t after_bytes = 0;
  int error = 28; // ENOSPC
};
void set_write_fault(const write_fault* f); // nullptr: no fault

} // namespace checkpoint
