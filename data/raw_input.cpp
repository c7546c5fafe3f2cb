// The raw bytes under every byte_stream (raw_input.hpp): standard input is
// read once per process, so what probes took is replayed to the data stream.
#include "data/raw_input.hpp"

#include <algorithm>
#include <cstring>

namespace data::stream_detail {

std::string errno_text(int err) { return err ? std::strerror(err) : "unknown error"; }
std::string shown_path(const std::string& path) { return is_stdin(path) ? "standard input ('-')" : "'" + path + "'"; }

stdin_state& stdin_shared() {
  static stdin_state s;
  return s;
}

bool raw_input::read(char* buf, std::size_t n, std::size_t* got) {
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

} // namespace data::stream_detail
