// The synthetic data's .meta.json sidecar parser. Property: anything it
// accepts, written back and parsed again, is the same meta.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "data/meta.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {
// write_meta then read_meta (to_json is internal to meta.cpp).
void check_roundtrip(const data::synthetic_meta& m) {
  char name[] = "/tmp/ss-fuzz-meta-XXXXXX";
  const int fd = mkstemp(name);
  FUZZ_CHECK(fd >= 0);
  close(fd);
  std::string err;
  FUZZ_CHECK(data::write_meta(name, m, &err));
  auto back = data::read_meta(name, &err);
  std::remove(name);
  FUZZ_CHECK(back.has_value());
  FUZZ_CHECK(*back == m);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string err;
  auto m = data::parse_meta(text, "fuzz.meta.json", &err);
  if (!m) {
    FUZZ_CHECK(err.find("fuzz.meta.json") != std::string::npos);
    return 0;
  }
  check_roundtrip(*m);
  return 0;
}
