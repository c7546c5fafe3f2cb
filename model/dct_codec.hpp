#pragma once
// DCT's hard threshold and its wire form (Gupta et al., KDD'21; DESIGN.md
// section 12; issue 13). Pure math and bytes: no CAF. The actors that send
// thresholded dense deltas, lookup replies and gradient pushes build on it.
//
//   tau = estimate_threshold(x, keep): about the fraction `keep` of |x_i| is
//         >= tau, estimated from a strided sample (never a full sort), so it
//         can be refreshed every few thousand rounds cheaply;
//   threshold(x, tau, out, residual): out = the entries with |x_i| >= tau;
//         with error feedback, residual_i = x_i - sent_i (what the next round
//         adds back);
//   round_to_half(out, residual): the sent values rounded to half precision
//         (model/half.hpp), the rounding's error added to the residual, so
//         error feedback carries it to a later round;
//   encode(out) / decode(bytes): u8 format, the size and nnz as unsigned
//     LEB128 varints (below), the indices
//     in the smallest of three forms, then the values. Each form but the
//     bitmap codes the first index and then each index's gap to the one
//     before less 1 (the "gaps"):
//       deltas: nnz unsigned LEB128 varints of the gaps (canonical: no
//               trailing zero byte)
//       bitmap: ceil(size/8) bytes of bits (bit i%8 of byte i/8)
//       rice:   u8 r (0-31), then the gaps as Golomb-Rice codes of
//               parameter 2^r: g >> r one bits and a zero bit, then g's
//               low r bits, least significant first; the bits packed from
//               bit 0 of each byte on, the last byte's unused bits zero.
//               A threshold's gaps are about geometric, and the code of
//               the best r takes about 5 bits a gap at a tenth of the
//               entries kept, 10 at 0.3 % (a varint: 8 and 16)
//     values: nnz x f32, or nnz x f16 (binary16) when out.half, or with
//             out.log8 an f32 scale s and nnz bytes, each the sign (bit 7)
//             and a level l (bits 0-6) of the value +-s 2^(l/8)
//             (log8_value).
//     The format byte: bit 0 the bitmap, bit 3 rice (bits 0 and 3 not
//     both; neither: deltas), bit 1 half values, bit 2 log8 values (bits 1
//     and 2 not both). Little-endian;
//     decode checks every size, bound and count, never reads past the end,
//     and names what is wrong.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace model {

struct sparse_vector {
  std::uint32_t size = 0;            // the dense length it stands for
  std::vector<std::uint32_t> index;  // strictly increasing, < size
  std::vector<float> value;          // parallel to index
  bool half = false;                 // values are halves (round_to_half) and go as 16 bits
  bool log8 = false;                 // values are +-scale 2^(l/8) (round_to_log8): 8 bits each
  float scale = 0;                   // log8: the smallest magnitude (level 0)
  std::size_t nnz() const { return index.size(); }
};

// The threshold that lets about the fraction `keep` (in (0, 1]) of x's
// entries pass, from at most `sample` entries taken at a stride (offset by
// `seed`). keep >= 1 gives 0 (everything passes).
float estimate_threshold(const float* x, std::size_t n, double keep, std::uint64_t seed = 0,
                         std::size_t sample = 4096);

// out = the entries of x with |x_i| >= tau (and x_i != 0). With a residual
// (n floats), residual_i = x_i for the entries not sent, 0 for those sent.
void threshold(const float* x, std::size_t n, float tau, sparse_vector& out,
               float* residual = nullptr);

// dst[index_k] += scale x value_k (dst has s.size floats).
void scatter_add(const sparse_vector& s, float* dst, float scale = 1.0f);

// Each value v := round_half(v) (saturated at +-65504); with a residual
// (s.size floats), residual[index] += v - round_half(v). Sets s.half.
void round_to_half(sparse_vector& s, float* residual = nullptr);

// 8-bit logarithmic values: the magnitude scale x 2^(level/8), level 0-127
// (up to about 60 000 x scale; each step 9 %). The same bits at both ends:
// a product of two floats, the second from a table of exact constants.
float log8_value(float scale, unsigned level);
// Each nonzero value v := sign(v) log8_value(scale, nearest level of
// |v| / scale in the logarithm), scale the smallest |v|; with a residual
// (s.size floats), residual[index] += v - that. Sets s.log8 and s.scale.
// Values must be nonzero (threshold's are).
void round_to_log8(sparse_vector& s, float* residual = nullptr);

enum class sparse_format : std::uint8_t { deltas = 0, bitmap = 1, rice = 2 };

// Bytes of the varint of v (1-5).
std::size_t varint_bytes(std::uint32_t v);
// Appends v as an unsigned LEB128 varint (the deltas form's; model/dct_mp_dynamic's marks).
void put_varint(std::vector<std::uint8_t>& out, std::uint32_t v);
// The canonical varint at p (advanced past it) into v, at most 5 bytes; else
// what is wrong: it runs past the end, is longer than 5 bytes, or is not
// canonical (a trailing zero byte).
std::optional<std::string> read_varint(const std::uint8_t*& p, const std::uint8_t* end,
                                       std::uint64_t& v);
// Bytes of s encoded with each index form, and the one encode() picks (the
// smallest; on a tie deltas, then the bitmap).
std::size_t encoded_bytes(const sparse_vector& s, sparse_format f);
sparse_format smaller_format(const sparse_vector& s);
// The rice form's parameter r for s's gaps: of the four around log2 of
// their mean, the one that takes the fewest bits (the smaller on a tie).
unsigned rice_parameter(const sparse_vector& s);

// s's values go as halves when s.half (round_to_half first: encode rounds
// any other value to nearest even, unsaturated, and the sender's own
// picture would no longer match what it sent).
std::vector<std::uint8_t> encode(const sparse_vector& s);
// The same in the form f (the tests write each form).
std::vector<std::uint8_t> encode(const sparse_vector& s, sparse_format f);

// Parses bytes written by encode(). `expected_size`: the dense length the
// receiver holds (a different one is an error). An error says what is
// wrong (truncated, a bad format byte, a varint that runs past the end or
// is not canonical, a rice parameter above 31 or a code that runs past
// the end, unused bits set, an index out of range, a bitmap that disagrees
// with its count, trailing bytes). out.half says how the values came.
std::optional<std::string> decode(const std::uint8_t* bytes, std::size_t len,
                                  std::uint32_t expected_size, sparse_vector& out);

} // namespace model
