#include "model/interaction.hpp"

#include <algorithm>
#include <cstring>

namespace model {

using Eigen::Index;

namespace {

// The widest float packet of the build's instruction-set level (4 with SSE2,
// 8 with AVX2, 16 with AVX-512); pmadd is a fused multiply-add where the level
// has one and a multiply then an add where not, so each level has its bits.
using packet = Eigen::internal::packet_traits<float>::type;
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

} // namespace

void interaction_forward(const Eigen::MatrixXf& bottom, const embedding_input& emb,
                         std::size_t num_tables, interaction_scratch& s, Eigen::MatrixXf& z) {
  const Index d = bottom.rows();
  const Index b = bottom.cols();
  const Index n = static_cast<Index>(num_tables) + 1;
  const Index np = padded(n);
  // tt holds T_e^T per example: [np, d] column-major (entry (i, k) = element k
  // of vector i at k*np + i), rows n..np-1 zero. Then column j of the Gram
  // matrix is sum_k tt[:, k] * T(k, j): packets over i, a broadcast per k.
  s.tcat.resize(np * d, b);
  s.gram.resize(np, n);
  z.resize(d + n * (n - 1) / 2, b);
  float* g = s.gram.data();
  for (Index e = 0; e < b; ++e) {
    float* tt = s.tcat.data() + e * np * d;
    const float* x = bottom.data() + e * d;
    for (Index k = 0; k < d; ++k)
      tt[k * np] = x[k];
    for (Index t = 1; t < n; ++t) {
      const float* row = emb.column(std::size_t(e * (n - 1) + t - 1), std::size_t(d));
      for (Index k = 0; k < d; ++k)
        tt[k * np + t] = row[k];
    }
    for (Index k = 0; k < d; ++k)
      std::fill(tt + k * np + n, tt + (k + 1) * np, 0.0f);
    // Column j needs rows i > j only: from the packet holding row j+1 on
    // (columns j+1.. of one call compute a few rows more, unused).
    for (Index j = 0; j + 1 < n;) {
      const Index first = (j + 1) / lanes;
      const Index packets = np / lanes - first;
      const Index cols = std::min(columns_for(std::min<Index>(packets, 4)), n - 1 - j);
      broadcast_products_n(tt + first * lanes, np, tt + j, np, 1, d, packets, cols,
                           g + j * np + first * lanes, np);
      j += cols;
    }
    float* out = z.data() + e * z.rows();
    std::memcpy(out, x, sizeof(float) * d);
    Index k = d;
    for (Index i = 1; i < n; ++i)
      for (Index j = 0; j < i; ++j)
        out[k++] = g[j * np + i];
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
  for (Index e = 0; e < b; ++e) {
    const float* g = dz.data() + e * dz.rows();
    // G_ij = t_i . t_j for i > j, so dL/dT = T (S + S^T).
    Index k = d;
    for (Index i = 1; i < n; ++i)
      for (Index j = 0; j < i; ++j) {
        sym[j * np + i] = g[k];
        sym[i * np + j] = g[k];
        ++k;
      }
    const float* tt = s.tcat.data() + e * np * d;
    const Index packets = np / lanes;
    for (Index c = 0; c < d;) {
      const Index cols = std::min(columns_for(std::min<Index>(packets, 4)), d - c);
      broadcast_products_n(sym, np, tt + c * np, 1, np, n, packets, cols, dt + c * np, np);
      c += cols;
    }
    for (Index r = 0; r < d; ++r)
      d_bottom(r, e) = g[r] + dt[r * np];
    for (Index c = 1; c < n; ++c) {
      const std::size_t i = std::size_t(e * (n - 1) + c - 1);
      float* dst = d_rows + (emb.index ? std::size_t{emb.index[i]} : i) * std::size_t(d);
      for (Index r = 0; r < d; ++r)
        dst[r] += dt[r * np + c];
    }
  }
}

} // namespace model
