#pragma once
// The one entry point of every fuzz target (libFuzzer's convention). Each
// tests/fuzz/*_fuzz.cpp defines it; it is linked either with libFuzzer
// (clang -fsanitize=fuzzer, tests/fuzz/fuzz.sh) or with replay_main.cpp,
// which feeds it the committed corpus (ctest fuzz_replay_*, also under ASan).
// A target returns 0; a bug is a crash, a sanitizer report or FUZZ_CHECK.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// A property of the code under test that must hold for every input.
#define FUZZ_CHECK(cond)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "%s:%d: fuzz property violated: %s\n", __FILE__, __LINE__, #cond);      \
      std::abort();                                                                                \
    }                                                                                              \
  } while (false)
