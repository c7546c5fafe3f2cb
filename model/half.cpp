#include "model/half.hpp"

#include <cstring>

namespace model {

namespace {

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

} // namespace

// After F. Giesen's float_to_half_fast3_rtne (public domain).
std::uint16_t to_half(float f) {
  std::uint32_t u = bits(f);
  const std::uint32_t sign = u & 0x80000000u;
  u ^= sign;
  std::uint16_t h;
  if (u >= (127u + 16u) << 23) { // |f| >= 2^16, infinity or NaN
    if (u > 0x7F800000u) {
      const std::uint16_t payload = std::uint16_t((u >> 13) & 0x3FFu);
      h = std::uint16_t(0x7C00u | (payload ? payload : 0x200u));
    } else {
      h = 0x7C00u;
    }
  } else if (u < 113u << 23) { // below 2^-14: a subnormal half or zero
    // Adding 0.5 aligns the 10 mantissa bits at the bottom of the float;
    // the FPU's round-to-nearest-even does the rounding.
    const std::uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    h = std::uint16_t(bits(from_bits(u) + from_bits(magic)) - magic);
  } else {
    const std::uint32_t odd = (u >> 13) & 1u;
    u += (std::uint32_t(15 - 127) << 23) + 0xFFFu + odd; // rebias, then round half to even
    h = std::uint16_t(u >> 13); // a carry out of the mantissa is the next exponent (or infinity)
  }
  return std::uint16_t(h | (sign >> 16));
}

float from_half(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  const std::uint32_t mant = h & 0x3FFu;
  if (exp == 0) { // zero or subnormal: mant x 2^-24, exact in a float
    const float v = float(mant) * 5.9604644775390625e-8f;
    return from_bits(bits(v) | sign);
  }
  if (exp == 31)
    return from_bits(sign | 0x7F800000u | mant << 13);
  return from_bits(sign | (exp + 112u) << 23 | mant << 13);
}

float round_half(float f) {
  if (f > half_max)
    return half_max;
  if (f < -half_max)
    return -half_max;
  return from_half(to_half(f));
}

} // namespace model
