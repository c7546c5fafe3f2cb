#pragma once
// IEEE 754 binary16 ("half") conversions for DCT's wire (model/dct_codec.hpp).
// Scalar and portable: the same bits on every x86-64 level, so two ends of a
// channel built differently still agree.
//
//   to_half(f):   round to nearest, ties to even (as F16C's _cvtss_sh with
//                 _MM_FROUND_TO_NEAREST_INT). |f| >= 65520 gives infinity; NaN
//                 stays NaN with its top 10 payload bits (quiet if those are 0).
//   from_half(h): exact (every half is a float).
//   round_half(f) = from_half(to_half(f)), saturated at +-65504 (the largest
//                 finite half) instead of overflowing: what a sender keeps of
//                 a value it sends in half precision.
#include <cstdint>

namespace model {

std::uint16_t to_half(float f);
float from_half(std::uint16_t h);
float round_half(float f);

constexpr float half_max = 65504.0f;

} // namespace model
