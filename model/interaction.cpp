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

// Calls f(std::integral_constant<int, P>{}, first) over `packets` packets in
// groups of P <= 4 consecutive ones (four at a time, then the rest), first
// being the group's first packet: a kernel's packet count as a constant.
template <class F>
inline void by_packet_groups(Index packets, F&& f) {
  Index first = 0;
  for (; packets >= 4; packets -= 4, first += 4)
    f(std::integral_constant<int, 4>{}, first);
  switch (packets) {
    case 3: f(std::integral_constant<int, 3>{}, first); break;
    case 2: f(std::integral_constant<int, 2>{}, first); break;
    case 1: f(std::integral_constant<int, 1>{}, first); break;
    default: break;
  }
}

// The same for any number of packets (four at a time) and cols <= 4.
inline void broadcast_products_n(const float* a, Index lda, const float* b, Index ldb, Index bcol,
                                 Index depth, Index packets, Index cols, float* out, Index ldo) {
  by_packet_groups(packets, [&](auto count, Index first) {
    broadcast_products_cols<decltype(count)::value>(a + first * lanes, lda, b, ldb, bcol, depth,
                                                    cols, out + first * lanes, ldo);
  });
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

// out[c*ldo + p*lanes ..+lanes) = sum over k < n, in order, of
//   tv[k*dp + p*lanes ..] * sym(k, j + c)   for c < cols, p < count,
// where sym = S + S^T (zero diagonal) is read from the interaction's output
// gradient g: pair (i, k), i > k, at g[off[i] + k]. For k < j the columns'
// weights lie in their own pieces of g, for k >= j + cols side by side.
template <int count, int cols>
inline void sym_products(const float* tv, Index dp, const float* g, const Index* off, Index n,
                         Index j, float* out, Index ldo) {
  using Eigen::internal::pmadd;
  using Eigen::internal::pset1;
  using Eigen::internal::ploadu;
  packet acc[cols][count];
  for (int c = 0; c < cols; ++c)
    for (int p = 0; p < count; ++p)
      acc[c][p] = pset1<packet>(0.0f);
  auto step = [&](Index k, auto weight) {
    const float* a = tv + k * dp;
    packet ap[count];
    for (int p = 0; p < count; ++p)
      ap[p] = ploadu<packet>(a + p * lanes);
    for (int c = 0; c < cols; ++c) {
      const packet w = pset1<packet>(weight(c));
      for (int p = 0; p < count; ++p)
        acc[c][p] = pmadd(ap[p], w, acc[c][p]);
    }
  };
  Index k = 0;
  for (; k < j; ++k)
    step(k, [&](int c) { return g[off[j + c] + k]; });
  for (; k < j + cols; ++k) // the diagonal block (a zero weight on the diagonal)
    step(k, [&](int c) {
      const Index jc = j + c;
      return k < jc ? g[off[jc] + k] : k > jc ? g[off[k] + jc] : 0.0f;
    });
  for (; k < n; ++k)
    step(k, [&](int c) { return g[off[k] + j + c]; });
  for (int c = 0; c < cols; ++c)
    for (int p = 0; p < count; ++p)
      Eigen::internal::pstoreu(out + c * ldo + p * lanes, acc[c][p]);
}

template <int count>
inline void sym_products_cols(const float* tv, Index dp, const float* g, const Index* off,
                              Index n, Index j, Index cols, float* out, Index ldo) {
  switch (cols) {
    case 4: sym_products<count, 4>(tv, dp, g, off, n, j, out, ldo); break;
    case 3: sym_products<count, 3>(tv, dp, g, off, n, j, out, ldo); break;
    case 2: sym_products<count, 2>(tv, dp, g, off, n, j, out, ldo); break;
    default: sym_products<count, 1>(tv, dp, g, off, n, j, out, ldo); break;
  }
}

// The same for any number of packets (four at a time) and cols <= 4.
inline void sym_products_n(const float* tv, Index dp, const float* g, const Index* off, Index n,
                           Index j, Index packets, Index cols, float* out, Index ldo) {
  by_packet_groups(packets, [&](auto count, Index first) {
    sym_products_cols<decltype(count)::value>(tv + first * lanes, dp, g, off, n, j, cols,
                                              out + first * lanes, ldo);
  });
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
  using Eigen::internal::padd;
  using Eigen::internal::ploadu;
  using Eigen::internal::pset1;
  using Eigen::internal::pstoreu;
  const Index n = static_cast<Index>(num_tables) + 1;
  const Index np = padded(n);
  const Index d = s.tcat.rows() / np;
  const Index dp = padded(d);
  const Index b = dz.cols();
  const Index packets = dp / lanes;
  d_bottom.resize(d, b);
  // A row's first use stores its gradient (as 0 + v, the bits of adding to
  // zero) instead of the whole of d_rows being zeroed first and read back:
  // with the sparse_index's inverse, rows are numbered by first use, so the
  // use of row `fresh` is its first. Any other numbering zeroes first.
  const std::uint32_t* index = emb.index;
  const std::size_t uses = std::size_t(b) * std::size_t(n - 1);
  bool first_use_order = true;
  std::size_t fresh = 0;
  for (std::size_t i = 0; index && i < uses && first_use_order; ++i) {
    first_use_order = index[i] <= fresh;
    fresh += index[i] == fresh;
  }
  if (!index)
    fresh = uses;
  const std::size_t zero_from = first_use_order ? fresh : 0; // rows stored at no use
  if (zero_from < emb.num_rows)
    std::memset(d_rows + zero_from * std::size_t(d), 0,
                sizeof(float) * std::size_t(d) * (emb.num_rows - zero_from));
  fresh = 0;
  // dT = T (S + S^T) with S the strictly lower triangle of dL/dG: column j
  // = sum over i, in order, of T[:, i] * sym(i, j), sym(j, j) = 0. These are
  // the products, in the order, of the Gram transpose form sym * T^T, so the
  // same bits, with packets over the vector's elements (tv [dp, n]: T_e, one
  // vector a column, padding rows zero).
  s.tv.setZero(dp, n);
  s.dt.resize(dp, n);
  s.offsets.resize(std::size_t(n));
  for (Index i = 1; i < n; ++i) // pair (i, 0) of the output gradient
    s.offsets[std::size_t(i)] = d + i * (i - 1) / 2;
  const Index* off = s.offsets.data();
  float* tv = s.tv.data();
  float* dt = s.dt.data();
  const Index cols_per_call = columns_for(std::min<Index>(packets, 4));
  for (Index e = 0; e < b; ++e) {
    const float* g = dz.data() + e * dz.rows();
    const float* tt = s.tcat.data() + e * np * d; // T_e^T from the forward
    for (Index k = 0; k < d; ++k) // x_e: row 0 of T_e^T
      tv[k] = tt[k * np];
    for (Index t = 1; t < n; ++t)
      copy_floats(tv + t * dp, emb.column(std::size_t(e * (n - 1) + t - 1), std::size_t(d)), d);
    for (Index j = 0; j < n;) {
      const Index cols = std::min(cols_per_call, n - j);
      sym_products_n(tv, dp, g, off, n, j, packets, cols, dt + j * dp, dp);
      j += cols;
    }
    float* db = d_bottom.data() + e * d;
    for (Index k = 0; k < d; ++k)
      db[k] = g[k] + dt[k];
    const std::uint32_t* idx = index ? index + e * (n - 1) : nullptr;
    for (Index t = 1; t < n; ++t) {
      const std::size_t r = idx ? std::size_t{idx[t - 1]} : std::size_t(e * (n - 1) + t - 1);
      float* dst = d_rows + r * std::size_t(d);
      const float* v = dt + t * dp;
      const bool first = first_use_order && r == fresh;
      fresh += first;
      Index k = 0;
      if (first) {
        const packet zero = pset1<packet>(0.0f);
        for (; k + lanes <= d; k += lanes)
          pstoreu(dst + k, padd(zero, ploadu<packet>(v + k)));
        for (; k < d; ++k)
          dst[k] = 0.0f + v[k];
      } else {
        for (; k + lanes <= d; k += lanes)
          pstoreu(dst + k, padd(ploadu<packet>(dst + k), ploadu<packet>(v + k)));
        for (; k < d; ++k)
          dst[k] += v[k];
      }
    }
  }
}

} // namespace model
