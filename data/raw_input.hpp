#pragma once
// Internals of byte_stream.cpp: the raw bytes of one input before any
// decompression, a FILE* or standard input, and the error texts the
// streams share. Not part of data/'s interface.
#include <cstddef>
#include <cstdio>
#include <string>

#include "data/byte_stream.hpp"

namespace data::stream_detail {

// strerror(err), or "unknown error" for 0.
std::string errno_text(int err);
// "'path'", or "standard input ('-')".
std::string shown_path(const std::string& path);

// Standard input, shared by every stream on "-": what probes read is kept
// in `seen` and replayed to the one data stream, which then reads on.
struct stdin_state {
  std::string seen;   // bytes read from the descriptor so far (by probes)
  bool taken = false; // a data stream has it
};
stdin_state& stdin_shared();

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
  bool read(char* buf, std::size_t n, std::size_t* got);
  std::FILE* file() const { return fp_; }
  bool is_stdin() const { return stdin_; }

private:
  std::FILE* fp_;
  bool stdin_, probe_;
  std::size_t replayed_ = 0;
};

} // namespace data::stream_detail
