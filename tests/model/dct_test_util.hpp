// Helpers shared by the DCT tests of tests/model/.
#pragma once

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace dct_test {

// A trainer's replica moving by noise, as SGD steps do.
inline void drift(std::vector<float>& w, std::mt19937& g, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  for (auto& x : w)
    x += d(g);
}

// Whether an error message is present and contains `part`.
inline bool contains(const std::optional<std::string>& e, const std::string& part) {
  return e && e->find(part) != std::string::npos;
}

} // namespace dct_test
