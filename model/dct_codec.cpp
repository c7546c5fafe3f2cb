#include "model/dct_codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/check.hpp"
#include "model/half.hpp"

namespace model {

namespace {


void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int b = 0; b < 4; ++b)
    out.push_back(std::uint8_t(v >> (8 * b)));
}

std::uint32_t get_u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}

void put_f32(std::vector<std::uint8_t>& out, float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, sizeof v);
  put_u32(out, v);
}

float get_f32(const std::uint8_t* p) {
  const std::uint32_t v = get_u32(p);
  float f;
  std::memcpy(&f, &v, sizeof f);
  return f;
}

// 2^(k/8), k = 0..7, as the nearest floats.
constexpr float eighths[8] = {1.0f, 1.09050773f, 1.18920712f, 1.29683955f,
                              1.41421356f, 1.54221083f, 1.68179283f, 1.83400809f};

unsigned log8_level(float v, float scale) {
  const double ratio = std::fabs(double(v)) / double(scale);
  if (!(ratio > 1.0))
    return 0;
  const double l = std::round(8.0 * std::log2(ratio));
  return l >= 127.0 ? 127u : unsigned(l);
}

} // namespace

float log8_value(float scale, unsigned level) {
  return scale * std::ldexp(eighths[level % 8], int(level / 8));
}

void round_to_log8(sparse_vector& s, float* residual) {
  float lo = 0;
  for (float v : s.value)
    if (v != 0.0f && (lo == 0.0f || std::fabs(v) < lo))
      lo = std::fabs(v);
  s.scale = lo > 0.0f ? lo : 1.0f;
  for (std::size_t k = 0; k < s.nnz(); ++k) {
    const float v = s.value[k];
    const float m = log8_value(s.scale, log8_level(v, s.scale));
    const float q = v < 0.0f ? -m : m;
    if (residual)
      residual[s.index[k]] += v - q;
    s.value[k] = q;
  }
  s.half = false;
  s.log8 = true;
}

std::size_t varint_bytes(std::uint32_t v) {
  std::size_t b = 1;
  while (v >= 0x80u) {
    v >>= 7;
    ++b;
  }
  return b;
}

namespace {

// The value coded for entry k in the deltas and rice forms: the first
// index, then each index's gap to the one before less 1.
std::uint32_t gap_at(const sparse_vector& s, std::size_t k) {
  return k == 0 ? s.index[0] : s.index[k] - s.index[k - 1] - 1;
}

// The rice form's parameter and the bits of its codes.
struct rice_plan {
  unsigned r = 0;
  std::uint64_t bits = 0;
  std::size_t bytes() const { return 1 + std::size_t((bits + 7) / 8); } // r's byte, the codes
};

rice_plan plan_rice(const sparse_vector& s) {
  rice_plan p;
  if (s.nnz() == 0)
    return p;
  std::uint64_t sum = 0;
  for (std::size_t k = 0; k < s.nnz(); ++k)
    sum += gap_at(s, k);
  const std::uint64_t mean = sum / s.nnz();
  int c = 0; // floor(log2(mean)), 0 below 2
  while (c < 63 && (mean >> (c + 1)) != 0)
    ++c;
  // Bits of the four candidates c-2..c+1 (kept within 0..31) in one pass.
  const int lo = std::clamp(c - 2, 0, 28);
  std::uint64_t bits[4];
  for (int j = 0; j < 4; ++j)
    bits[j] = std::uint64_t(s.nnz()) * std::uint64_t(1 + lo + j);
  for (std::size_t k = 0; k < s.nnz(); ++k) {
    const std::uint32_t g = gap_at(s, k);
    for (int j = 0; j < 4; ++j)
      bits[j] += g >> (lo + j);
  }
  int best = 0;
  for (int j = 1; j < 4; ++j)
    if (bits[j] < bits[best])
      best = j;
  p.r = unsigned(lo + best);
  p.bits = bits[best];
  return p;
}

// The format byte and the varints of the size and the count.
std::size_t header_bytes_of(const sparse_vector& s) {
  return 1 + varint_bytes(s.size) + varint_bytes(std::uint32_t(s.nnz()));
}

std::size_t value_bytes_of(const sparse_vector& s) {
  return s.log8 ? 4 + s.nnz() : (s.half ? 2 : 4) * s.nnz();
}

std::size_t deltas_bytes(const sparse_vector& s) {
  std::size_t n = 0;
  for (std::size_t k = 0; k < s.nnz(); ++k)
    n += varint_bytes(gap_at(s, k));
  return n;
}

// The smallest form, given s's rice plan.
sparse_format pick(const sparse_vector& s, const rice_plan& rice) {
  const std::size_t map = (std::size_t(s.size) + 7) / 8;
  // Every varint is at least a byte: with more entries than the bitmap has
  // bytes, the deltas lose to the bitmap without summing the varints.
  if (s.nnz() <= map) {
    const std::size_t deltas = deltas_bytes(s);
    if (deltas <= map && deltas <= rice.bytes())
      return sparse_format::deltas;
  }
  return map <= rice.bytes() ? sparse_format::bitmap : sparse_format::rice;
}

std::vector<std::uint8_t> encode_as(const sparse_vector& s, sparse_format f, const rice_plan& rice);

} // namespace

unsigned rice_parameter(const sparse_vector& s) { return plan_rice(s).r; }

std::size_t encoded_bytes(const sparse_vector& s, sparse_format f) {
  const std::size_t n = header_bytes_of(s) + value_bytes_of(s);
  if (f == sparse_format::bitmap)
    return n + (std::size_t(s.size) + 7) / 8;
  if (f == sparse_format::rice)
    return n + plan_rice(s).bytes();
  return n + deltas_bytes(s);
}

sparse_format smaller_format(const sparse_vector& s) { return pick(s, plan_rice(s)); }

void put_varint(std::vector<std::uint8_t>& out, std::uint32_t v) {
  while (v >= 0x80u) {
    out.push_back(std::uint8_t(v | 0x80u));
    v >>= 7;
  }
  out.push_back(std::uint8_t(v));
}

std::optional<std::string> read_varint(const std::uint8_t*& p, const std::uint8_t* end,
                                       std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p == end)
      return std::string("truncated: it runs past the end");
    if (shift == 35)
      return std::string("longer than 5 bytes");
    const std::uint8_t b = *p++;
    v |= std::uint64_t(b & 0x7Fu) << shift;
    if (!(b & 0x80u)) {
      if (b == 0 && shift > 0)
        return std::string("not canonical (a trailing zero byte)");
      return std::nullopt;
    }
  }
}

std::vector<std::uint8_t> encode(const sparse_vector& s) {
  const auto rice = plan_rice(s);
  return encode_as(s, pick(s, rice), rice);
}

std::vector<std::uint8_t> encode(const sparse_vector& s, sparse_format f) {
  return encode_as(s, f, f == sparse_format::rice ? plan_rice(s) : rice_plan{});
}

namespace {

std::vector<std::uint8_t> encode_as(const sparse_vector& s, sparse_format f, const rice_plan& rice) {
  SS_CHECK(s.index.size() == s.value.size(), "an index per value");
  SS_CHECK(!(s.half && s.log8), "values as halves or as log8, not both");
  std::vector<std::uint8_t> out;
  const std::size_t n = header_bytes_of(s) + value_bytes_of(s);
  out.reserve(n + (f == sparse_format::bitmap ? (std::size_t(s.size) + 7) / 8
                   : f == sparse_format::rice ? rice.bytes()
                                              : 5 * s.nnz()));
  const unsigned form_bits = f == sparse_format::bitmap ? 1u : f == sparse_format::rice ? 8u : 0u;
  out.push_back(std::uint8_t(form_bits | (s.half ? 2u : 0u) | (s.log8 ? 4u : 0u)));
  put_varint(out, s.size);
  put_varint(out, std::uint32_t(s.nnz()));
  if (f == sparse_format::deltas) {
    for (std::size_t k = 0; k < s.nnz(); ++k)
      put_varint(out, gap_at(s, k));
  } else if (f == sparse_format::rice) {
    const unsigned r = rice.r;
    out.push_back(std::uint8_t(r));
    std::uint64_t acc = 0; // bits not yet written, from bit 0 on
    unsigned held = 0;     // their count, below 8 between puts
    auto put = [&](std::uint64_t bits, unsigned count) { // count <= 33
      acc |= bits << held;
      held += count;
      for (; held >= 8; held -= 8, acc >>= 8)
        out.push_back(std::uint8_t(acc));
    };
    const std::uint64_t low_mask = (std::uint64_t(1) << r) - 1;
    for (std::size_t k = 0; k < s.nnz(); ++k) {
      const std::uint32_t g = gap_at(s, k);
      std::uint64_t q = g >> r;
      for (; q >= 32; q -= 32)
        put(0xFFFFFFFFu, 32);
      // q ones, a zero, then the low bits: at most 32 + 31 bits, in two puts
      put((std::uint64_t(1) << q) - 1, unsigned(q) + 1);
      put(g & low_mask, r);
    }
    if (held > 0)
      out.push_back(std::uint8_t(acc));
  } else {
    const std::size_t at = out.size();
    out.resize(at + (std::size_t(s.size) + 7) / 8, 0);
    for (auto i : s.index)
      out[at + i / 8] |= std::uint8_t(1u << (i % 8));
  }
  if (s.log8) {
    put_f32(out, s.scale);
    for (float v : s.value)
      out.push_back(std::uint8_t((v < 0.0f ? 0x80u : 0u) | log8_level(v, s.scale)));
  } else if (s.half) {
    for (float v : s.value) {
      const std::uint16_t h = to_half(v);
      out.push_back(std::uint8_t(h));
      out.push_back(std::uint8_t(h >> 8));
    }
  } else {
    for (float v : s.value)
      put_f32(out, v);
  }
  return out;
}

// An entry's index beyond the vector (at_least: the smallest its code could give).
std::string index_out_of_range(std::uint32_t k, std::uint64_t i, std::uint32_t size,
                               bool at_least = false) {
  return std::string("index ") + (at_least ? "at least " : "") + std::to_string(i) +
         " (entry " + std::to_string(k) + ") out of range [0, " + std::to_string(size) + ")";
}

// The deltas form's nnz varints from [p, end): the indices, or what is wrong.
std::optional<std::string> read_deltas(const std::uint8_t*& p, const std::uint8_t* end,
                                       std::uint32_t size, std::uint32_t nnz,
                                       std::vector<std::uint32_t>& index) {
  std::uint64_t next = 0; // the smallest index the next entry may have
  for (std::uint32_t k = 0; k < nnz; ++k) {
    std::uint64_t v = 0;
    if (auto e = read_varint(p, end, v))
      return "the varint of entry " + std::to_string(k) + ": " + *e;
    const std::uint64_t i = next + v;
    if (i >= size)
      return index_out_of_range(k, i, size);
    index.push_back(std::uint32_t(i));
    next = i + 1;
  }
  return std::nullopt;
}

// The rice form from [p, end): its parameter and nnz codes, or what is
// wrong. p ends past the codes' last byte.
std::optional<std::string> read_rice(const std::uint8_t*& p, const std::uint8_t* end,
                                     std::uint32_t size, std::uint32_t nnz,
                                     std::vector<std::uint32_t>& index) {
  if (p == end)
    return std::string("truncated: the rice form's parameter byte is missing");
  const unsigned r = *p++;
  if (r > 31)
    return "rice parameter " + std::to_string(r) + ", expected 0-31";
  const std::size_t nbytes = std::size_t(end - p);
  const std::uint64_t bits = std::uint64_t(nbytes) * 8;
  // The bits from bit i on (bit i at bit 0), and how many of them are real:
  // at most 57 of a whole 8-byte load, fewer at the end.
  auto window = [&](std::uint64_t i, unsigned& valid) {
    const std::size_t byte = std::size_t(i >> 3);
    std::uint64_t w = 0;
    const std::size_t take = std::min<std::size_t>(8, nbytes - byte);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (take == 8)
      std::memcpy(&w, p + byte, 8);
    else
#endif
      for (std::size_t b = 0; b < take; ++b) // little-endian whatever the host
        w |= std::uint64_t(p[byte + b]) << (8 * b);
    const unsigned shift = unsigned(i & 7);
    valid = unsigned(std::min<std::uint64_t>(8 * take - shift, bits - i));
    return w >> shift;
  };
  const std::uint64_t low_mask = (std::uint64_t(1) << r) - 1;
  std::uint64_t at = 0;   // the next bit
  std::uint64_t next = 0; // the smallest index the next entry may have
  for (std::uint32_t k = 0; k < nnz; ++k) {
    std::uint64_t q = 0;
    for (;;) { // the unary part: ones up to a zero
      unsigned valid = 0;
      const std::uint64_t w = at < bits ? window(at, valid) : 0;
      const unsigned ones = ~w == 0 ? 64u : unsigned(__builtin_ctzll(~w));
      if (ones < valid) {
        q += ones;
        at += ones + 1;
        break;
      }
      q += valid;
      at += valid;
      if (next + (q << r) >= size) // every index this code can give is too large
        return index_out_of_range(k, next + (q << r), size, true);
      if (at == bits)
        return "the rice code of entry " + std::to_string(k) + " runs past the end";
    }
    if (next + (q << r) >= size)
      return index_out_of_range(k, next + (q << r), size, true);
    if (bits - at < r)
      return "the rice code of entry " + std::to_string(k) + " runs past the end";
    std::uint64_t low = 0;
    if (r > 0) {
      unsigned valid = 0;
      low = window(at, valid) & low_mask; // r <= 31 <= valid here
      at += r;
    }
    const std::uint64_t i = next + (q << r | low);
    if (i >= size)
      return index_out_of_range(k, i, size);
    index.push_back(std::uint32_t(i));
    next = i + 1;
  }
  if (at % 8 != 0) {
    unsigned valid = 0;
    const std::uint64_t rest = window(at, valid) & ((std::uint64_t(1) << (8 - at % 8)) - 1);
    if (rest != 0)
      return "the rice form's unused bit " +
             std::to_string(at % 8 + unsigned(__builtin_ctzll(rest))) +
             " of its last byte is set";
    at += 8 - at % 8;
  }
  p += at / 8;
  return std::nullopt;
}

} // namespace

std::optional<std::string> decode(const std::uint8_t* bytes, std::size_t len,
                                  std::uint32_t expected_size, sparse_vector& out) {
  if (len == 0)
    return std::string("truncated: 0 bytes, a header needs at least 3");
  const std::uint8_t format = bytes[0];
  if ((format & ~0x0Fu) || (format & 9u) == 9u || (format & 6u) == 6u)
    return "format byte " + std::to_string(format) +
           ", expected bits 0-3 only (bit 0: bitmap, bit 3: rice, not both, neither: deltas; "
           "bit 1: half values, bit 2: log8 values, not both)";
  const auto f = format & 1u   ? sparse_format::bitmap
                 : format & 8u ? sparse_format::rice
                               : sparse_format::deltas;
  const bool half = format & 2u;
  const bool log8 = format & 4u;
  const std::size_t value_bytes = half ? 2 : log8 ? 1 : 4;
  const std::size_t scale_bytes = log8 ? 4 : 0; // before the values
  const std::uint8_t* p = bytes + 1;
  const std::uint8_t* const end = bytes + len;
  std::uint64_t size64 = 0, nnz64 = 0;
  if (auto e = read_varint(p, end, size64))
    return "the header's size: " + *e;
  if (auto e = read_varint(p, end, nnz64))
    return "the header's count: " + *e;
  if (size64 > 0xFFFFFFFFu)
    return "a vector of " + std::to_string(size64) + " entries, at most 2^32 - 1";
  const auto size = std::uint32_t(size64);
  const std::size_t header_bytes = std::size_t(p - bytes);
  if (size != expected_size)
    return "a vector of " + std::to_string(size) + " entries, expected " +
           std::to_string(expected_size);
  if (nnz64 > size)
    return std::to_string(nnz64) + " entries kept of " + std::to_string(size);
  const auto nnz = std::uint32_t(nnz64);
  const char* form = f == sparse_format::deltas  ? "deltas"
                     : f == sparse_format::rice ? "rice"
                                                : "bitmap";
  // The values' bytes at least, before anything is reserved for them.
  if (len - header_bytes < scale_bytes + value_bytes * nnz)
    return "truncated: " + std::to_string(len) + " bytes, " + std::to_string(nnz) +
           " values need " + std::to_string(header_bytes + scale_bytes + value_bytes * nnz) +
           " in the " + form + " form";
  out.size = size;
  out.half = half;
  out.log8 = log8;
  out.scale = 0;
  out.index.clear();
  out.value.clear();
  out.index.reserve(nnz);
  out.value.reserve(nnz);
  const std::uint8_t* const values_at = bytes + len - value_bytes * nnz - scale_bytes;
  if (f == sparse_format::deltas) {
    if (auto err = read_deltas(p, values_at, size, nnz, out.index))
      return err;
  } else if (f == sparse_format::rice) {
    if (auto err = read_rice(p, values_at, size, nnz, out.index))
      return err;
  } else {
    const std::size_t map_bytes = (std::size_t(size) + 7) / 8;
    if (std::size_t(values_at - p) < map_bytes)
      return "truncated: " + std::to_string(len) + " bytes, the bitmap of " +
             std::to_string(size) + " entries and " + std::to_string(nnz) + " values need " +
             std::to_string(header_bytes + map_bytes + value_bytes * nnz);
    for (std::size_t b = 0; b < map_bytes; ++b)
      for (unsigned bit = 0; bit < 8; ++bit)
        if (p[b] >> bit & 1u) {
          const std::size_t i = b * 8 + bit;
          if (i >= size)
            return "bitmap bit " + std::to_string(i) + " set beyond the " +
                   std::to_string(size) + " entries";
          if (out.index.size() == nnz)
            return "bitmap has more bits set than its count " + std::to_string(nnz);
          out.index.push_back(std::uint32_t(i));
        }
    if (out.index.size() != nnz)
      return "bitmap has " + std::to_string(out.index.size()) + " bits set, its count says " +
             std::to_string(nnz);
    p += map_bytes;
  }
  if (p != values_at)
    return std::to_string(len) + " bytes, " +
           std::to_string(std::size_t(p - bytes) + scale_bytes + value_bytes * nnz) +
           " expected for " + std::to_string(nnz) + " of " + std::to_string(size) +
           " entries in the " + form + " form";
  if (log8) {
    out.scale = get_f32(p);
    p += 4;
    // A normal scale whose largest level stays finite: every value decodes.
    if (!(out.scale >= 1.17549435e-38f) || !std::isfinite(log8_value(out.scale, 127)))
      return "log8 scale " + std::to_string(out.scale) +
             ", expected a normal float with scale x 2^(127/8) finite";
    for (std::uint32_t k = 0; k < nnz; ++k, ++p) {
      const float m = log8_value(out.scale, *p & 0x7Fu);
      out.value.push_back(*p & 0x80u ? -m : m);
    }
    return std::nullopt;
  }
  for (std::uint32_t k = 0; k < nnz; ++k, p += value_bytes)
    out.value.push_back(half ? from_half(std::uint16_t(p[0] | p[1] << 8)) : get_f32(p));
  return std::nullopt;
}

} // namespace model
