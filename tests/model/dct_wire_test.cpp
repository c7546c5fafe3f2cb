// DCT's compact wire (model/dct_codec.hpp, model/half.hpp): half-precision
// rounding to nearest even (against F16C where the build has it), the
// rounding's error kept for error feedback, the varint deltas against the
// bitmap at the boundary where one becomes smaller, the rice form bit by
// bit, and malformed or truncated deltas and rice codes refused with a
// message, never read past their end.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "model/dct_codec.hpp"
#include "model/half.hpp"
#include "dct_test_util.hpp"

namespace {

using dct_test::contains;

float f32(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::uint32_t u32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// A header: format, size, nnz (varints), then `rest`.
std::vector<std::uint8_t> wire(std::uint8_t format, std::uint32_t size, std::uint32_t nnz,
                               std::vector<std::uint8_t> rest) {
  std::vector<std::uint8_t> b{format};
  model::put_varint(b, size);
  model::put_varint(b, nnz);
  b.insert(b.end(), rest.begin(), rest.end());
  return b;
}

model::sparse_vector at(std::uint32_t size, std::vector<std::uint32_t> index) {
  model::sparse_vector s;
  s.size = size;
  s.index = std::move(index);
  s.value.assign(s.index.size(), 0.5f);
  return s;
}

} // namespace

TEST_CASE("half: conversions round to nearest even and are exact back") {
  CHECK(model::to_half(1.0f) == 0x3C00);
  CHECK(model::to_half(-2.0f) == 0xC000);
  CHECK(model::to_half(65504.0f) == 0x7BFF);   // the largest finite half
  CHECK(model::to_half(65519.0f) == 0x7BFF);   // below the midpoint to 65536
  CHECK(model::to_half(65520.0f) == 0x7C00);   // the midpoint: ties to even, infinity
  CHECK(model::round_half(1e6f) == 65504.0f);  // saturated instead
  CHECK(model::round_half(-1e6f) == -65504.0f);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: to even (1). 1 + 3 x 2^-11
  // lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
  CHECK(model::to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  CHECK(model::to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  // Subnormals: 2^-24 is the smallest; 2^-25 ties between 0 and it (to 0);
  // 3 x 2^-25 ties between 1 and 2 units (to 2).
  CHECK(model::to_half(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(model::to_half(std::ldexp(1.0f, -25)) == 0x0000);
  CHECK(model::to_half(3 * std::ldexp(1.0f, -25)) == 0x0002);
  CHECK(model::to_half(std::ldexp(1.0f, -14)) == 0x0400); // the smallest normal
  CHECK(model::to_half(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(std::isnan(model::from_half(model::to_half(std::nanf("")))));
  // Every half goes to a float and back unchanged (NaNs keep their payload).
  for (std::uint32_t h = 0; h < 0x10000; ++h)
    REQUIRE(model::to_half(model::from_half(std::uint16_t(h))) == h);
  CHECK(double(model::from_half(0x3555)) == 0.333251953125); // 2^-2 x (1 + 341/1024)
#if defined(__F16C__)
  // Against the hardware: every exponent, random mantissas, both signs.
  std::mt19937 g(7);
  for (int k = 0; k < 2000000; ++k) {
    const float x = f32(std::uint32_t(g()));
    if (std::isnan(x))
      continue;
    const auto hw = std::uint16_t(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
    REQUIRE(model::to_half(x) == hw);
    REQUIRE(u32(model::from_half(hw)) == u32(_cvtsh_ss(hw)));
  }
#endif
}

TEST_CASE("half: rounding a sent vector keeps its error in the residual") {
  std::mt19937 g(3);
  std::normal_distribution<float> d(0.0f, 1e-3f);
  std::vector<float> x(5000);
  for (auto& v : x)
    v = d(g);
  x[7] = 1e6f; // beyond a half: saturates, the rest waits in the residual
  model::sparse_vector s;
  std::vector<float> residual(x.size());
  model::threshold(x.data(), x.size(), model::estimate_threshold(x.data(), x.size(), 0.05),
                   s, residual.data());
  model::round_to_half(s, residual.data());
  CHECK(s.half);
  std::size_t rounded = 0;
  for (std::size_t k = 0; k < s.nnz(); ++k) {
    const auto i = s.index[k];
    CHECK(model::round_half(s.value[k]) == s.value[k]); // a half exactly
    rounded += residual[i] != 0.0f;
    // sent + residual = x, bit for bit (x - h is exact: h is within x's binade)
    REQUIRE(u32(s.value[k] + residual[i]) == u32(x[i]));
  }
  CHECK(rounded > s.nnz() / 2); // most values really were rounded
  CHECK(residual[7] == 1e6f - 65504.0f);
  // The half values round-trip through the wire bit for bit, at 2 bytes each.
  const auto b = model::encode(s);
  CHECK(b[0] == (8 | 2)); // rice, half
  model::sparse_vector back;
  REQUIRE_FALSE(model::decode(b.data(), b.size(), s.size, back));
  CHECK(back.half);
  CHECK(back.index == s.index);
  CHECK(std::memcmp(back.value.data(), s.value.data(), s.nnz() * 4) == 0);
  CHECK(b.size() == model::encoded_bytes(s, model::sparse_format::rice));
}

TEST_CASE("dct wire: varint deltas against the bitmap at the boundary") {
  // 800 entries: a 100-byte bitmap. Adjacent indices cost a varint byte each.
  std::vector<std::uint32_t> first100, first101;
  for (std::uint32_t i = 0; i < 101; ++i)
    (i < 100 ? first100.push_back(i) : void()), first101.push_back(i);
  auto tie = at(800, first100);
  CHECK(model::encoded_bytes(tie, model::sparse_format::deltas) ==
        model::encoded_bytes(tie, model::sparse_format::bitmap));
  // Adjacent indices take a bit each in the rice form (r 0): 13 bytes and r's.
  // (the header: the format byte, 800 in a 2-byte varint, 100 in one byte)
  CHECK(model::encoded_bytes(tie, model::sparse_format::rice) == 4 + 4 * 100 + 1 + 13);
  CHECK(model::smaller_format(tie) == model::sparse_format::rice);
  // Two entries, 16 apart: a varint byte each ties the 2-byte bitmap, and
  // the rice form's 9 bits (r 2) and its r byte take 3: deltas on a tie.
  const auto two = at(16, {0, 15});
  CHECK(model::rice_parameter(two) == 2);
  CHECK(model::encoded_bytes(two, model::sparse_format::deltas) ==
        model::encoded_bytes(two, model::sparse_format::bitmap));
  CHECK(model::encoded_bytes(two, model::sparse_format::rice) ==
        model::encoded_bytes(two, model::sparse_format::bitmap) + 1);
  CHECK(model::smaller_format(two) == model::sparse_format::deltas);
  // Every entry of 16 kept: the bitmap's 2 bytes against 16 rice bits and r's.
  std::vector<std::uint32_t> all16;
  for (std::uint32_t i = 0; i < 16; ++i)
    all16.push_back(i);
  CHECK(model::smaller_format(at(16, all16)) == model::sparse_format::bitmap);
  // A last gap of 128 after index 98 (index 227) takes a 2-byte varint:
  // deltas lose by one.
  auto over = tie;
  over.index.back() = 98 + 1 + 128;
  CHECK(model::encoded_bytes(over, model::sparse_format::deltas) ==
        model::encoded_bytes(over, model::sparse_format::bitmap) + 1);
  CHECK(model::smaller_format(over) == model::sparse_format::rice); // 228 bits at r 0
  // Varint lengths at their edges, and the largest index there is.
  for (std::uint32_t v : {0u, 127u, 128u, 16383u, 16384u, 2097151u, 2097152u, 268435455u,
                          268435456u, 0xFFFFFFFEu})
    CHECK(model::varint_bytes(v) == (v < 128u ? 1u : v < 16384u ? 2u : v < 2097152u ? 3u
                                     : v < 268435456u ? 4u : 5u));
  for (const auto& s : {at(0xFFFFFFFFu, {0xFFFFFFFEu}), at(300000, {0, 127, 128, 16512, 299999}),
                        over, at(800, first101)}) {
    const auto b = model::encode(s);
    CHECK(b.size() == model::encoded_bytes(s, model::smaller_format(s)));
    model::sparse_vector back;
    REQUIRE_FALSE(model::decode(b.data(), b.size(), s.size, back));
    CHECK(back.index == s.index);
    CHECK(back.value == s.value);
  }
}

TEST_CASE("dct wire: malformed deltas are refused, truncations never read past the end") {
  model::sparse_vector out;
  const std::vector<std::uint8_t> v2{0, 0, 0, 0, 0, 0, 0, 0}; // two f32 zeros
  auto with = [&](std::vector<std::uint8_t> varints) {
    varints.insert(varints.end(), v2.begin(), v2.end());
    return wire(0, 1000, 2, varints);
  };
  auto b = with({0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00});
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "longer than 5 bytes"));
  b = with({0x81, 0x00, 0x01});
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "not canonical"));
  b = with({0xE8, 0x07, 0x00}); // first index 1000
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "index 1000 (entry 0) out of range"));
  b = with({0xE7, 0x07, 0x00}); // 999, then the next one after it: 1000
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "index 1000 (entry 1) out of range"));
  b = with({0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}); // a gap of 2^32 - 1 does not wrap
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "out of range"));
  b = with({0x05, 0x80}); // the second varint's last byte is missing
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "runs past the end"));
  b = with({0x05, 0x06, 0x07}); // one byte too many before the values
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "expected for"));
  b = wire(6, 1000, 0, {}); // half and log8 values at once
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "format byte 6"));
  b = wire(9, 1000, 0, {}); // bitmap and rice at once
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "format byte 9"));
  b = wire(16, 1000, 0, {});
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "format byte 16"));
  b = wire(2, 1000, 999, {0, 0, 0}); // a count whose values cannot be there
  CHECK(contains(model::decode(b.data(), b.size(), 1000, out), "values need"));
  b = with({0x05, 0x06});
  REQUIRE_FALSE(model::decode(b.data(), b.size(), 1000, out));
  CHECK(out.index == std::vector<std::uint32_t>{5, 12});
  // Every proper prefix of a valid encoding, in each form, is refused (the
  // ASan build checks that none is read past its end).
  std::mt19937 g(5);
  std::vector<std::uint32_t> idx;
  for (std::uint32_t i = 0; i < 4000; i += 1 + g() % 300)
    idx.push_back(i);
  for (bool half : {false, true})
    for (auto form : {model::sparse_format::deltas, model::sparse_format::bitmap,
                      model::sparse_format::rice})
    for (const auto& s : {at(4000, idx), at(4000, std::vector<std::uint32_t>(idx.begin(), idx.begin() + 3)),
                          at(64, {0, 1, 2, 3, 5, 8, 13, 21, 34, 55})}) {
      auto t = s;
      t.half = half;
      const auto full = model::encode(t, form);
      for (std::size_t len = 0; len < full.size(); ++len) {
        std::vector<std::uint8_t> cut(full.begin(), full.begin() + std::ptrdiff_t(len));
        REQUIRE(model::decode(cut.data(), cut.size(), t.size, out).has_value());
      }
    }
}

TEST_CASE("dct wire: log8 values, one byte each, round trip exactly and keep their error") {
  model::sparse_vector s;
  s.size = 1000;
  std::mt19937 g(21);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (std::uint32_t i = 0; i < s.size; i += 11) {
    s.index.push_back(i);
    const float m = std::pow(10.0f, u(g)) * 1e-3f; // 1e-6 .. 1: about 2^20 of range
    s.value.push_back(i % 2 ? -m : m);
  }
  const auto orig = s.value;
  std::vector<float> residual(s.size, 0.0f);
  model::round_to_log8(s, residual.data());
  REQUIRE(s.log8);
  REQUIRE_FALSE(s.half);
  double worst = 0;
  for (std::size_t k = 0; k < s.nnz(); ++k) {
    CHECK(s.value[k] + residual[s.index[k]] == doctest::Approx(orig[k]).epsilon(1e-6));
    CHECK((s.value[k] < 0) == (orig[k] < 0));
    // Within 2^(1/16) - 1 = 4.4 % (half a level) below 2^(127/8) x scale.
    if (std::fabs(orig[k]) < 6e4f * s.scale)
      worst = std::max(worst, std::fabs(double(s.value[k]) / orig[k] - 1.0));
  }
  CHECK(worst < 0.045);
  CHECK(worst > 0.01);
  const auto bytes = model::encode(s);
  // header 4 (the format byte, 1000 in 2 varint bytes, 91 in one); the rice form: r 2 (of r 1..4 for the gaps' mean of 9), 5 bits
  // a gap of 10 and 3 for the first index, 453 bits in 57 bytes, and r's byte
  // (varints: 91 bytes; the bitmap 125); scale 4, a byte a value.
  CHECK(model::rice_parameter(s) == 2);
  CHECK(bytes.size() == 4 + 1 + 57 + 4 + s.nnz());
  CHECK(bytes.size() == model::encoded_bytes(s, model::smaller_format(s)));
  model::sparse_vector back;
  REQUIRE_FALSE(model::decode(bytes.data(), bytes.size(), s.size, back));
  CHECK(back.log8);
  CHECK(back.index == s.index);
  CHECK(back.value == s.value); // bit for bit: both ends' pictures take these
  CHECK(model::encode(back) == bytes);
  for (std::size_t len = 0; len < bytes.size(); ++len) // every proper prefix is refused
    CHECK(model::decode(bytes.data(), len, s.size, back).has_value());
  auto bad = bytes;
  bad[0] = 6; // half and log8 at once
  CHECK(model::decode(bad.data(), bad.size(), s.size, back).has_value());
  bad = bytes;
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(bad.data() + bytes.size() - 4 - s.nnz(), &inf, 4); // the scale
  const auto err = model::decode(bad.data(), bad.size(), s.size, back);
  REQUIRE(err.has_value());
  CHECK(err->find("log8 scale") != std::string::npos);
}

TEST_CASE("dct wire: the rice form bit by bit, and its malformed codes refused") {
  // Indices 3, 5, 20: gaps 3, 1, 14; of r 0..3 (the mean 6's candidates)
  // r 2 takes the fewest bits, 12: 0|11, 0|10, 1110|01 (unary, then the
  // low bits least significant first), packed from bit 0: 0xD6, 0x09.
  const auto s = at(100, {3, 5, 20});
  CHECK(model::rice_parameter(s) == 2);
  const std::vector<std::uint8_t> half{0x00, 0x00, 0x00, 0x3F}; // 0.5f
  std::vector<std::uint8_t> body{2, 0xD6, 0x09};
  for (int k = 0; k < 3; ++k)
    body.insert(body.end(), half.begin(), half.end());
  const auto b = model::encode(s, model::sparse_format::rice);
  CHECK(b == wire(8, 100, 3, body));
  model::sparse_vector out;
  REQUIRE_FALSE(model::decode(b.data(), b.size(), 100, out));
  CHECK(out.index == s.index);
  CHECK(out.value == s.value);
  // Each check, one at a time (nnz 1, f32 value 0.5 after the codes).
  auto one = [&](std::uint32_t size, std::vector<std::uint8_t> codes) {
    codes.insert(codes.end(), half.begin(), half.end());
    return wire(8, size, 1, codes);
  };
  auto err = [&](const std::vector<std::uint8_t>& w, std::uint32_t size) {
    return model::decode(w.data(), w.size(), size, out);
  };
  CHECK(contains(err(one(1000, {32, 0x00}), 1000), "rice parameter 32, expected 0-31"));
  CHECK(contains(err(one(1000, {}), 1000), "parameter byte is missing"));
  CHECK(contains(err(one(1000, {0, 0xFF}), 1000), "entry 0 runs past the end")); // no zero bit
  CHECK(contains(err(one(1000, {8, 0x00}), 1000), "entry 0 runs past the end")); // 7 of 8 low bits
  CHECK(contains(err(one(5, {0, 0x3F}), 5), "index at least 6 (entry 0) out of range [0, 5)"));
  CHECK(contains(err(one(10, {4, 0x1E}), 10), "index 15 (entry 0) out of range [0, 10)"));
  CHECK(contains(err(one(10, {4, 0x0A, 0x00}), 10), "expected for")); // a byte too many
  REQUIRE_FALSE(err(one(10, {4, 0x0A}), 10)); // 0, then 1010 least significant first: 5
  CHECK(out.index == std::vector<std::uint32_t>{5});
  auto bad = b;
  bad[3 + 2] |= 0x80; // the last code byte's bit 7, unused (12 bits of 16)
  CHECK(contains(err(bad, 100), "unused bit 7 of its last byte is set"));
  // A gap of 2^32 - 1 after index 0 neither wraps nor loops for long.
  const auto far = at(0xFFFFFFFFu, {0, 0xFFFFFFFEu});
  const auto fb = model::encode(far, model::sparse_format::rice);
  REQUIRE_FALSE(model::decode(fb.data(), fb.size(), far.size, out));
  CHECK(out.index == far.index);
  CHECK(contains(model::decode(fb.data(), fb.size(), 0xFFFFFFFEu, out), "expected"));
}
