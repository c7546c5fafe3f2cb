#pragma once
// The checkpoint fuzz target's structured decoding (checkpoint_fuzz.cpp):
// the input read as the fields of well-formed files.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fuzz_ckpt {

// The input read as fields; past its end every byte is 0 (= "as the model").
struct fields {
  const std::uint8_t* p;
  std::size_t n;
  bool exact = true; // every field so far took the model's own value
  std::uint8_t u8() {
    if (n == 0)
      return 0;
    --n;
    return *p++;
  }
  // `want`, or (one byte in two) a value near it, a multiple of it, or any.
  std::uint64_t value(std::uint64_t want) {
    const std::uint8_t b = u8();
    if (b < 128)
      return want;
    exact = false;
    if (b < 160)
      return want + (b - 127);
    if (b < 192)
      return want > std::uint64_t(b - 159) ? want - (b - 159) : 0;
    if (b < 224)
      return want * std::uint64_t(b - 190);
    return std::uint64_t(u8()) | std::uint64_t(u8()) << 8;
  }
  // A count of floats to write: bounded so one input stays small.
  std::uint64_t count(std::uint64_t want) { return std::min<std::uint64_t>(value(want), 1 << 16); }
  std::string name(const char* want) {
    const std::uint8_t b = u8();
    if (b < 240)
      return want;
    exact = false;
    static const char* others[] = {"weights", "state", "params", "rows", "", "global"};
    return others[b % 6];
  }
};

} // namespace fuzz_ckpt
