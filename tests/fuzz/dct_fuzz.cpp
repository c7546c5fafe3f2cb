// DCT's sparse wire form (model/dct_codec.hpp). Properties: the decoder
// never reads out of bounds; what it accepts has strictly increasing indices
// below the size and a value per index; encoding that again and decoding it
// gives the same entries, bit for bit.
#include <cstring>

#include "model/dct_codec.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The receiver's size from the header itself (the varint after the format
  // byte), so the fuzzer gets past it.
  std::uint32_t expected = 0;
  if (size >= 2) {
    const std::uint8_t* p = data + 1;
    std::uint64_t v = 0;
    if (!model::read_varint(p, data + size, v) && v <= 0xFFFFFFFFu)
      expected = std::uint32_t(v);
  }
  model::sparse_vector s;
  if (auto e = model::decode(data, size, expected, s)) {
    FUZZ_CHECK(!e->empty());
    return 0;
  }
  FUZZ_CHECK(s.size == expected);
  FUZZ_CHECK(s.index.size() == s.value.size());
  for (std::size_t k = 0; k < s.nnz(); ++k) {
    FUZZ_CHECK(s.index[k] < s.size);
    FUZZ_CHECK(k == 0 || s.index[k] > s.index[k - 1]);
  }
  const auto again = model::encode(s);
  model::sparse_vector back;
  FUZZ_CHECK(!model::decode(again.data(), again.size(), expected, back));
  FUZZ_CHECK(back.index == s.index);
  FUZZ_CHECK(back.value.size() == s.value.size());
  FUZZ_CHECK(s.value.empty() ||
             std::memcmp(back.value.data(), s.value.data(), s.value.size() * sizeof(float)) == 0);
  return 0;
}
