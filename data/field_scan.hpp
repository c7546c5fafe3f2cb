#pragma once
// The byte-level syntax of a data line, for line_parser.cpp's hot loop
// (inline: called once per line and once per numeric field): where the
// delimiters are (a vectorised scan on x86), and what counts as a number.
// SS_NO_SIMD forces the portable byte loop (to test it on x86).
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <system_error>

#if (defined(__AVX2__) || defined(__SSE2__)) && !defined(SS_NO_SIMD)
#define SS_SIMD_SCAN 1
#include <immintrin.h>
#endif

namespace data::field_scan {

// Stores the positions of the first `max` delimiters of [p, e) in out and
// returns how many there are, or max + 1 if there are more.
inline std::size_t find_delimiters(const char* p, const char* e, char d, const char** out, std::size_t max) {
  std::size_t n = 0;
  const char* q = p;
#if defined(SS_SIMD_SCAN)
#if defined(__AVX2__)
  using vec = __m256i;
  const vec pattern = _mm256_set1_epi8(d);
  auto match = [&](const char* at) {
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const vec*>(at)), pattern)));
  };
#else
  using vec = __m128i;
  const vec pattern = _mm_set1_epi8(d);
  auto match = [&](const char* at) {
    return static_cast<std::uint32_t>(
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const vec*>(at)), pattern)));
  };
#endif
  for (; e - q >= static_cast<std::ptrdiff_t>(sizeof(vec)); q += sizeof(vec)) {
    for (std::uint32_t m = match(q); m != 0; m &= m - 1) {
      if (n == max)
        return max + 1;
      out[n++] = q + __builtin_ctz(m);
    }
  }
#endif
  for (; q != e; ++q) {
    if (*q == d) {
      if (n == max)
        return max + 1;
      out[n++] = q;
    }
  }
  return n;
}

// Any decimal number std::from_chars accepts, plus a leading '+'.
enum class number { ok, not_finite, invalid };
inline number parse_double(const char* p, const char* e, double* out) {
  if (p != e && *p == '+' && e - p > 1 && p[1] != '-')
    ++p;
  const auto r = std::from_chars(p, e, *out);
  if (r.ptr != e || p == e)
    return number::invalid;
  if (r.ec == std::errc::result_out_of_range)
    return number::not_finite; // e.g. 1e400
  if (r.ec != std::errc())
    return number::invalid;
  return std::isfinite(*out) ? number::ok : number::not_finite; // "inf", "nan"
}

} // namespace data::field_scan
