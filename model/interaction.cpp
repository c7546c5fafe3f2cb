#include "model/interaction.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace model {

using Eigen::Index;

namespace {

// The widest float packet of the build's instruction-set level (4 with SSE2,
// 8 with AVX2, 16 with AVX-512); pmadd is a fused multiply-add where the level
// has one and a multiply then an add where not, so each level has its bits.
using packet = Eigen::internal::packet_traits<float>::type;
// A packet type as a template argument drops its vector attributes (harmless
// here: Eigen's own headers silence the same warning).
#pragma GCC diagnostic ignored "-Wignored-attributes"
constexpr Index lanes = Eigen::internal::packet_traits<float>::size;

// For the `cols` columns c (<= 4) and `count` packets p (<= 4):
//   out[c*ldo + p*lanes ..+lanes) = sum over k < depth, in order, of
//                                   a[k*lda + p*lanes ..] * b[c*bcol + k*ldb].
// Each output lane sums its own products in one order whatever the addresses
// (no reduction across lanes). cols x count independent accumulators hide the
// multiply-add latency; the a packets are shared by the columns.
template <int count, int cols>
inline void broadcast_products(const float* a, Index lda, const float* b, Index ldb, Index bcol,
                               Index depth, float* out, Index ldo) {
  using Eigen::internal::pmadd;
  using Eigen::internal::pset1;
  using Eigen::internal::ploadu;
  packet acc[cols][count];
  for (int c = 0; c < cols; ++c)
    for (int p = 0; p < count; ++p)
      acc[c][p] = pset1<packet>(0.0f);
  for (Index k = 0; k < depth; ++k) {
    const float* ak = a + k * lda;
    packet ap[count];
    for (int p = 0; p < count; ++p)
      ap[p] = ploadu<packet>(ak + p * lanes);
    for (int c = 0; c < cols; ++c) {
      const packet bk = pset1<packet>(b[c * bcol + k * ldb]);
      for (int p = 0; p < count; ++p)
        acc[c][p] = pmadd(ap[p], bk, acc[c][p]);
    }
  }
  for (int c = 0; c < cols; ++c)
    for (int p = 0; p < count; ++p)
      Eigen::internal::pstoreu(out + c * ldo + p * lanes, acc[c][p]);
}

template <int count>
inline void broadcast_products_cols(const float* a, Index lda, const float* b, Index ldb,
                                    Index bcol, Index depth, Index cols, float* out, Index ldo) {
  switch (cols) {
    case 4: broadcast_products<count, 4>(a, lda, b, ldb, bcol, depth, out, ldo); break;
    case 3: broadcast_products<count, 3>(a, lda, b, ldb, bcol, depth, out, ldo); break;
    case 2: broadcast_products<count, 2>(a, lda, b, ldb, bcol, depth, out, ldo); break;
    default: broadcast_products<count, 1>(a, lda, b, ldb, bcol, depth, out, ldo); break;
  }
}

// Columns per call for `packets` packets: about 8 accumulators.
Index columns_for(Index packets) { return std::clamp<Index>((8 + packets - 1) / packets, 1, 4); }

// The same for any number of packets (four at a time) and cols <= 4.
inline void broadcast_products_n(const float* a, Index lda, const float* b, Index ldb, Index bcol,
                                 Index depth, Index packets, Index cols, float* out, Index ldo) {
  for (; packets >= 4; packets -= 4, a += 4 * lanes, out += 4 * lanes)
    broadcast_products_cols<4>(a, lda, b, ldb, bcol, depth, cols, out, ldo);
  switch (packets) {
    case 3: broadcast_products_cols<3>(a, lda, b, ldb, bcol, depth, cols, out, ldo); break;
    case 2: broadcast_products_cols<2>(a, lda, b, ldb, bcol, depth, cols, out, ldo); break;
    case 1: broadcast_products_cols<1>(a, lda, b, ldb, bcol, depth, cols, out, ldo); break;
    default: break;
  }
}

Index padded(Index n) { return (n + lanes - 1) / lanes * lanes; }

// dst[0..count) = src[0..count), inline: a call to memcpy for each of the
// T pieces of every example (a few floats each) was 2.7 % of the small
// model's cycles. From a packet on, the last packet overlaps the one before.
inline void copy_floats(float* dst, const float* src, Index count) {
  using Eigen::internal::ploadu;
  using Eigen::internal::pstoreu;
  if (count < lanes) {
    for (Index k = 0; k < count; ++k)
      dst[k] = src[k];
    return;
  }
  Index k = 0;
  for (; k + lanes <= count; k += lanes)
    pstoreu(dst + k, ploadu<packet>(src + k));
  if (k < count)
    pstoreu(dst + count - lanes, ploadu<packet>(src + count - lanes));
}

} // namespace

namespace {

// tt[k*np + t] = v_t[k] for the n vectors v_t (vector(t)), k < d; rows n..np-1
// zero. With d a multiple of the packet width, lanes x lanes blocks are
// transposed in registers.
template <class Vector>
void transpose_in(Vector vector, Index n, Index np, Index d, float* tt) {
  using Eigen::internal::ploadu;
  using Eigen::internal::pset1;
  if (d % lanes == 0) {
    Eigen::internal::PacketBlock<packet, int(lanes)> blk;
    for (Index t0 = 0; t0 < np; t0 += lanes)
      for (Index k0 = 0; k0 < d; k0 += lanes) {
        for (Index r = 0; r < lanes; ++r)
          blk.packet[r] = t0 + r < n ? ploadu<packet>(vector(t0 + r) + k0) : pset1<packet>(0.0f);
        Eigen::internal::ptranspose(blk);
        for (Index r = 0; r < lanes; ++r)
          Eigen::internal::pstoreu(tt + (k0 + r) * np + t0, blk.packet[r]);
      }
    return;
  }
  for (Index t = 0; t < n; ++t) {
    const float* v = vector(t);
    for (Index k = 0; k < d; ++k)
      tt[k * np + t] = v[k];
  }
  for (Index k = 0; k < d; ++k)
    std::fill(tt + k * np + n, tt + (k + 1) * np, 0.0f);
}

// The way back: out(t)[k] (+)= dt[k*np + t] for t < n, k < d, where out(t)
// returns the destination and whether to add (true) or to store.
template <class Out>
void transpose_out(const float* dt, Index n, Index np, Index d, Out out) {
  using Eigen::internal::ploadu;
  if (d % lanes == 0) {
    Eigen::internal::PacketBlock<packet, int(lanes)> blk;
    for (Index t0 = 0; t0 < n; t0 += lanes)
      for (Index k0 = 0; k0 < d; k0 += lanes) {
        for (Index r = 0; r < lanes; ++r)
          blk.packet[r] = ploadu<packet>(dt + (k0 + r) * np + t0);
        Eigen::internal::ptranspose(blk);
        for (Index r = 0; r < lanes && t0 + r < n; ++r)
          out(t0 + r, k0, blk.packet[r]);
      }
    return;
  }
  for (Index t = 0; t < n; ++t)
    for (Index k = 0; k < d; ++k)
      out(t, k, dt[k * np + t]);
}

} // namespace

void interaction_forward(const Eigen::MatrixXf& bottom, const embedding_input& emb,
                         std::size_t num_tables, interaction_scratch& s, Eigen::MatrixXf& z) {
  const Index d = bottom.rows();
  const Index b = bottom.cols();
  const Index n = static_cast<Index>(num_tables) + 1;
  const Index np = padded(n);
  // tt holds T_e^T per example: [np, d] column-major (entry (i, k) = element k
  // of vector i at k*np + i), rows n..np-1 zero. Column j of the Gram matrix
  // is sum_k tt[:, k] * T(k, j): packets over i, a broadcast per k. The
  // output's row-major lower triangle (1,0), (2,0), (2,1), ... is, by
  // symmetry, the column-major upper triangle: column j's rows 0..j-1.
  s.tcat.resize(np * d, b);
  s.gram.resize(np, n);
  z.resize(d + n * (n - 1) / 2, b);
  float* g = s.gram.data();
  for (Index e = 0; e < b; ++e) {
    float* tt = s.tcat.data() + e * np * d;
    const float* x = bottom.data() + e * d;
    transpose_in(
      [&](Index t) {
        return t == 0 ? x : emb.column(std::size_t(e * (n - 1) + t - 1), std::size_t(d));
      },
      n, np, d, tt);
    // Columns j.. of one call take the packets column j+cols-1 needs (the
    // others compute a few rows more, unused).
    for (Index j = 1; j < n;) {
      const Index cols = std::min<Index>(4, n - j);
      const Index packets = (j + cols - 1 + lanes - 1) / lanes;
      const Index fit = std::min(columns_for(std::min<Index>(packets, 4)), cols);
      const Index need = (j + fit - 1 + lanes - 1) / lanes;
      broadcast_products_n(tt, np, tt + j, np, 1, d, need, fit, g + j * np, np);
      j += fit;
    }
    float* out = z.data() + e * z.rows();
    copy_floats(out, x, d);
    Index k = d;
    for (Index i = 1; i < n; k += i, ++i)
      copy_floats(out + k, g + i * np, i);
  }
}

void interaction_backward(const Eigen::MatrixXf& dz, const embedding_input& emb,
                          std::size_t num_tables, interaction_scratch& s,
                          Eigen::MatrixXf& d_bottom, float* d_rows) {
  const Index n = static_cast<Index>(num_tables) + 1;
  const Index np = padded(n);
  const Index d = s.tcat.rows() / np;
  const Index b = dz.cols();
  d_bottom.resize(d, b);
  std::memset(d_rows, 0, sizeof(float) * std::size_t(d) * emb.num_rows);
  // sym [np, n]: S + S^T with S the strictly lower triangle of dL/dG (zero
  // diagonal, rows n..np-1 zero); dt [np, d] = (T (S + S^T))^T = sym * T^T,
  // column k = sum_i sym[:, i] * T(k, i).
  s.sym.setZero(np, n);
  s.dt.resize(np, d);
  float* sym = s.sym.data();
  float* dt = s.dt.data();
  const Index packets = np / lanes;
  for (Index e = 0; e < b; ++e) {
    const float* g = dz.data() + e * dz.rows();
    // G_ij = t_i . t_j for i > j, so dL/dT = T (S + S^T). Pair (i, j)'s
    // gradient is g[d + i(i-1)/2 + j]: column i's rows 0..i-1 in one piece.
    for (Index i = 1, k = d; i < n; k += i, ++i) {
      copy_floats(sym + i * np, g + k, i);
      for (Index j = 0; j < i; ++j)
        sym[j * np + i] = g[k + j];
    }
    const float* tt = s.tcat.data() + e * np * d;
    for (Index c = 0; c < d;) {
      const Index cols = std::min(columns_for(std::min<Index>(packets, 4)), d - c);
      broadcast_products_n(sym, np, tt + c * np, 1, np, n, packets, cols, dt + c * np, np);
      c += cols;
    }
    float* db = d_bottom.data() + e * d;
    const std::uint32_t* idx = emb.index ? emb.index + e * (n - 1) : nullptr;
    auto row_of = [&](Index t) {
      const std::size_t i = idx ? std::size_t{idx[t - 1]} : std::size_t(e * (n - 1) + t - 1);
      return d_rows + i * std::size_t(d);
    };
    transpose_out(dt, n, np, d, [&](Index t, Index k, auto v) {
      using value = decltype(v);
      if constexpr (std::is_same_v<value, float>) {
        if (t == 0)
          db[k] = g[k] + v;
        else
          row_of(t)[k] += v;
      } else {
        using Eigen::internal::padd;
        using Eigen::internal::ploadu;
        using Eigen::internal::pstoreu;
        if (t == 0) {
          pstoreu(db + k, padd(ploadu<packet>(g + k), v));
        } else {
          float* dst = row_of(t) + k;
          pstoreu(dst, padd(ploadu<packet>(dst), v));
        }
      }
    });
  }
}

} // namespace model
