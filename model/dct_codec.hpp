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
//   encode(out) / decode(bytes): the smaller of two forms,
//     indices: u8 format 0, u32 size, u32 nnz, nnz x u32 index (increasing),
//              nnz x f32 value
//     bitmap:  u8 format 1, u32 size, u32 nnz, ceil(size/8) bytes of bits
//              (bit i%8 of byte i/8), nnz x f32 value
//     little-endian; decode checks every size, bound and count and names
//     what is wrong.
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

enum class sparse_format : std::uint8_t { indices = 0, bitmap = 1 };

// Bytes of each form, and the one encode() picks (the smaller; indices on
// a tie).
std::size_t encoded_bytes(std::uint32_t size, std::size_t nnz, sparse_format f);
sparse_format smaller_format(std::uint32_t size, std::size_t nnz);

std::vector<std::uint8_t> encode(const sparse_vector& s);

// Parses bytes written by encode(). `expected_size`: the dense length the
// receiver holds (a different one is an error). An error says what is
// wrong (truncated, a bad format byte, an index out of range or out of
// order, a bitmap that disagrees with its count, trailing bytes).
std::optional<std::string> decode(const std::uint8_t* bytes, std::size_t len,
                                  std::uint32_t expected_size, sparse_vector& out);

} // namespace model
