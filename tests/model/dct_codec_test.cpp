// DCT's threshold and its wire form (model/dct_codec.hpp): the estimated
// threshold keeps about the asked fraction, error feedback loses nothing,
// both wire forms round-trip and the smaller is chosen, and the decoder
// refuses every malformed input it can be given, saying what is wrong.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/dct_codec.hpp"
#include "dct_test_util.hpp"

namespace {

using dct_test::contains;

std::vector<float> normal(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x)
    v = d(g);
  return x;
}

model::sparse_vector thresholded(const std::vector<float>& x, double keep) {
  model::sparse_vector s;
  model::threshold(x.data(), x.size(), model::estimate_threshold(x.data(), x.size(), keep), s);
  return s;
}

} // namespace

TEST_CASE("dct: the estimated threshold keeps about the asked fraction") {
  const auto x = normal(200000, 1);
  for (double keep : {0.5, 0.1, 0.01, 0.001}) {
    const auto s = thresholded(x, keep);
    const double got = double(s.nnz()) / double(x.size());
    CHECK(got == doctest::Approx(keep).epsilon(0.25)); // from a 4096-entry sample
  }
  CHECK(model::estimate_threshold(x.data(), x.size(), 1.0) == 0.0f);
  CHECK(thresholded(x, 1.0).nnz() == x.size()); // keep 1: everything nonzero passes
}

TEST_CASE("dct: the kept entries are the largest, and error feedback loses nothing") {
  const auto x = normal(10000, 2);
  const float tau = model::estimate_threshold(x.data(), x.size(), 0.05);
  model::sparse_vector s;
  std::vector<float> residual(x.size());
  model::threshold(x.data(), x.size(), tau, s, residual.data());
  REQUIRE(s.nnz() > 0);
  for (std::size_t k = 0; k < s.nnz(); ++k)
    CHECK(std::fabs(s.value[k]) >= tau);
  for (float r : residual)
    CHECK(std::fabs(r) < tau);
  // sent + residual = x, exactly
  std::vector<float> back = residual;
  model::scatter_add(s, back.data());
  CHECK(std::memcmp(back.data(), x.data(), x.size() * sizeof(float)) == 0);
}

TEST_CASE("dct: the three wire forms round-trip, and encode picks the smallest") {
  const auto x = normal(4096, 3);
  using model::sparse_format;
  auto form_bits = [](sparse_format f) {
    return f == sparse_format::bitmap ? 1u : f == sparse_format::rice ? 8u : 0u;
  };
  for (double keep : {0.002, 0.03, 0.1, 0.2, 0.9}) {
    const auto s = thresholded(x, keep);
    const auto bytes = model::encode(s);
    const auto f = model::smaller_format(s);
    CHECK(bytes[0] == form_bits(f));
    CHECK(bytes.size() == model::encoded_bytes(s, f));
    for (auto g : {sparse_format::deltas, sparse_format::bitmap, sparse_format::rice}) {
      CHECK(bytes.size() <= model::encoded_bytes(s, g));
      const auto b = model::encode(s, g); // each form, whether picked or not
      CHECK(b[0] == form_bits(g));
      CHECK(b.size() == model::encoded_bytes(s, g));
      model::sparse_vector back;
      REQUIRE_FALSE(model::decode(b.data(), b.size(), s.size, back));
      CHECK(back.size == s.size);
      CHECK(back.index == s.index);
      CHECK(back.value == s.value);
    }
  }
  // A threshold's gaps are about geometric: the rice codes take about 5
  // bits a gap at a tenth kept (a varint byte, a 10-bit share of the
  // bitmap) and about 10 at 0.25 % (2 varint bytes); nearly every entry
  // kept, the bitmap.
  for (double keep : {0.0025, 0.1}) {
    const auto s = thresholded(x, keep);
    CHECK(model::smaller_format(s) == sparse_format::rice);
    const std::size_t values = 1 + model::varint_bytes(s.size) +
                               model::varint_bytes(std::uint32_t(s.nnz())) +
                               4 * s.nnz(); // the header and the f32 values
    const double rice_bits = 8.0 * (model::encoded_bytes(s, sparse_format::rice) - values - 1);
    const double varint_bits = 8.0 * (model::encoded_bytes(s, sparse_format::deltas) - values);
    MESSAGE("keep " << keep << ": " << rice_bits / s.nnz() << " bits a gap, varints "
                    << varint_bits / s.nnz());
    CHECK(rice_bits / s.nnz() < (keep < 0.01 ? 11.5 : 5.5));
    CHECK(rice_bits < 0.7 * varint_bits);
  }
  CHECK(model::smaller_format(thresholded(x, 0.9)) == sparse_format::bitmap);
  // An empty vector, and nothing kept.
  model::sparse_vector empty;
  model::sparse_vector back;
  auto b = model::encode(empty);
  CHECK_FALSE(model::decode(b.data(), b.size(), 0, back));
  CHECK(back.nnz() == 0);
}

TEST_CASE("dct: the decoder refuses malformed bytes and says what is wrong") {
  const auto x = normal(1000, 4);
  const auto few = thresholded(x, 0.01);
  const auto many = thresholded(x, 0.5);
  auto idx = model::encode(few, model::sparse_format::deltas);
  auto map = model::encode(many, model::sparse_format::bitmap);
  REQUIRE(idx[0] == 0);
  REQUIRE(map[0] == 1);
  model::sparse_vector out;
  CHECK(contains(model::decode(idx.data(), 5, 1000, out), "truncated"));
  CHECK(contains(model::decode(idx.data(), idx.size() - 1, 1000, out), "truncated"));
  CHECK(contains(model::decode(map.data(), map.size() - 1, 1000, out), "truncated"));
  auto longer = idx;
  longer.push_back(0);
  CHECK(contains(model::decode(longer.data(), longer.size(), 1000, out), "expected for"));
  longer = map;
  longer.push_back(0);
  CHECK(contains(model::decode(longer.data(), longer.size(), 1000, out), "expected for"));
  CHECK(contains(model::decode(idx.data(), idx.size(), 999, out), "expected 999"));
  auto bad = idx;
  bad[0] = 7;
  CHECK(contains(model::decode(bad.data(), bad.size(), 1000, out), "format byte 7"));
  // A bitmap whose bits disagree with its count, or run past the size.
  bad = map;
  bad[1 + 2 + model::varint_bytes(std::uint32_t(many.nnz()))] ^= 0x01; // the bitmap's first byte
  CHECK(contains(model::decode(bad.data(), bad.size(), 1000, out), "bitmap"));
  model::sparse_vector odd;
  odd.size = 12; // 2 bitmap bytes, bits 12..15 unused
  for (std::uint32_t i = 0; i < 12; ++i)
    odd.index.push_back(i), odd.value.push_back(1.0f);
  auto ob = model::encode(odd);
  REQUIRE(ob[0] == 1);
  ob[3 + 1] |= 0x80; // bit 15 (the header: the format byte, 12, 12)
  CHECK(contains(model::decode(ob.data(), ob.size(), 12, out), "beyond"));
  // A count larger than the vector (1001 of 1000), and header varints that
  // run past the end, are too long or are not canonical.
  bad = {0, 0xE8, 0x07, 0xE9, 0x07, 0, 0, 0, 0};
  CHECK(contains(model::decode(bad.data(), bad.size(), 1000, out), "1001 entries kept of 1000"));
  bad = {0, 0xE8};
  CHECK(contains(model::decode(bad.data(), bad.size(), 1000, out), "the header's size: truncated"));
  bad = {0, 0xE8, 0x07, 0x85};
  CHECK(contains(model::decode(bad.data(), bad.size(), 1000, out), "the header's count: truncated"));
  bad = {0, 0xE8, 0x87, 0x00, 0x00};
  CHECK(contains(model::decode(bad.data(), bad.size(), 1000, out), "the header's size: not canonical"));
  bad = {0, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x00};
  CHECK(contains(model::decode(bad.data(), bad.size(), 1000, out), "at most 2^32 - 1"));
  CHECK(contains(model::decode(bad.data(), 0, 1000, out), "truncated: 0 bytes"));
}

TEST_CASE("dct: the threshold estimate is the sample's (1 - keep) quantile, kept few or many") {
  // Few kept entries take a heap, many a partition: both must give the
  // order statistic a full sort gives, ties and repeated values included.
  std::mt19937 g(17);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (const std::size_t n : {1u, 7u, 100u, 1000u, 5000u, 20000u})
    for (const double keep : {0.0001, 0.003, 0.01, 0.05, 0.1, 0.5, 0.99}) {
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) // a quarter of the values repeat
        x[i] = i % 4 == 3 ? x[i - 1] : std::round(d(g) * 64.0f) / 64.0f;
      for (const std::uint64_t seed : {0u, 5u}) {
        CAPTURE(n);
        CAPTURE(keep);
        const std::size_t m = std::min<std::size_t>(n, 4096), stride = n / m;
        const std::size_t offset = stride > 1 ? seed % stride : 0;
        std::vector<float> s(m);
        for (std::size_t i = 0; i < m; ++i)
          s[i] = std::fabs(x[offset + i * stride]);
        std::sort(s.begin(), s.end());
        const std::size_t kept = std::max<std::size_t>(1, std::size_t(std::ceil(keep * double(m))));
        CHECK(model::estimate_threshold(x.data(), n, keep, seed) == s[m - std::min(m, kept)]);
      }
    }
}
