// model::remainder_by (the row of a hash in make_keys) against the %
// operator: the same value for every divisor kind and for the numerators at
// the edges of 64 bits.
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/embedding.hpp"

TEST_CASE("remainder_by gives h % d exactly") {
  std::mt19937_64 rng(11);
  std::vector<std::uint64_t> divisors{1, 2, 3, 7, 10, 1000, 65536, 100000, 1000003,
                                      (std::uint64_t{1} << 32) - 1, std::uint64_t{1} << 32,
                                      (std::uint64_t{1} << 40) + 1, ~std::uint64_t{0} / 3,
                                      ~std::uint64_t{0} - 1, ~std::uint64_t{0}};
  for (int i = 0; i < 200; ++i)
    divisors.push_back(rng() >> (rng() % 64) | 1);
  std::size_t wrong = 0, checked = 0;
  for (const std::uint64_t d : divisors) {
    const model::remainder_by mod(d);
    std::vector<std::uint64_t> hs{0, 1, d - 1, d, d + 1, 2 * d - 1, ~std::uint64_t{0},
                                  ~std::uint64_t{0} - 1, std::uint64_t{1} << 63};
    for (int k = 0; k < 2000; ++k)
      hs.push_back(rng());
    for (const std::uint64_t h : hs) {
      ++checked;
      wrong += mod(h) != h % d;
    }
  }
  CHECK(checked > 400000);
  CHECK(wrong == 0);
}

TEST_CASE("make_keys: the row is the hash modulo the table's rows") {
  const std::uint64_t rows = 100000;
  std::vector<std::uint64_t> hashes{0, 99999, 100000, 123456789012345ULL, ~std::uint64_t{0}, 7};
  std::vector<std::uint64_t> keys(hashes.size());
  model::make_keys(hashes.data(), hashes.size(), 3, rows, keys.data());
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    CHECK(model::key_table(keys[i]) == i % 3);
    CHECK(model::key_row(keys[i]) == hashes[i] % rows);
  }
}
