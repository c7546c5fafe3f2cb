#pragma once
// Deterministic randomness for the synthetic generator (DESIGN.md section 4).
//
// Two kinds:
//   - split_mix64: a seeded engine for sample streams (examples, labels).
//   - hash_combine / hash_to_*: stateless hashing for teacher parameters, so
//     a per-value effect is a pure function of (teacher_seed, column, value)
//     and nothing proportional to a vocabulary is ever stored.
//
// Everything is bit-for-bit reproducible for one build: no
// std::*_distribution (their algorithms are implementation-defined).
#include "data/hashing.hpp"

#include <cmath>
#include <cstdint>

namespace data {

// SplitMix64 (Steele, Lea & Flood 2014): 64-bit state, passes BigCrush,
// and any 64-bit value is a good seed. Not thread-safe: one per stream.
class split_mix64 {
public:
  explicit split_mix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return splitmix64_finalize(state_);
  }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Standard normal (Box-Muller; the second value of each pair is cached).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform(); // (0, 1]: log stays finite
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 6.283185307179586 * u2; // 2 pi
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

private:
  std::uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Mixes v into the key h; distinct (h, v) give independent-looking outputs.
inline std::uint64_t hash_combine(std::uint64_t h, std::uint64_t v) {
  return splitmix64_finalize(h ^ splitmix64_finalize(v + 0x9E3779B97F4A7C15ULL));
}

// Uniform in [0, 1) from a hash.
inline double hash_to_unit(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// Approximately standard normal from a hash: Irwin-Hall sum of the four
// 16-bit lanes, centred and scaled to mean 0, variance 1. Bounded by
// +-sqrt(12) = 3.46; cheap (no transcendental call), which matters because
// the teacher evaluates dozens of these per row.
inline double hash_to_normal(std::uint64_t h) {
  const double s = static_cast<double>(h & 0xffff) + static_cast<double>((h >> 16) & 0xffff) +
                   static_cast<double>((h >> 32) & 0xffff) + static_cast<double>(h >> 48);
  // Each lane: mean 32767.5, variance (65536^2 - 1) / 12 ~ 65536^2 / 12.
  // Sum of four: mean 131070, sd 65536 / sqrt(3).
  return (s - 131070.0) * (1.7320508075688772 / 65536.0);
}

// A bijection on 32-bit words (MurmurHash3's fmix32): every step is
// invertible mod 2^32, so distinct inputs give distinct outputs.
inline std::uint32_t mix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

// Numerically stable log(1 + exp(x)).
inline double softplus(double x) { return (x > 0 ? x : 0.0) + std::log1p(std::exp(-std::fabs(x))); }

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Binary entropy in nats; 0 at p = 0 and p = 1.
inline double binary_entropy(double p) {
  if (p <= 0.0 || p >= 1.0)
    return 0.0;
  return -(p * std::log(p) + (1.0 - p) * std::log1p(-p));
}

} // namespace data
