#pragma once
// All dense (MLP) parameters of a model live in ONE contiguous float buffer,
// so snapshot, sync and checkpoint are single memcpy-sized operations. This
// header describes where each layer's weights and bias sit in that buffer.
//
// Layer l of width in -> out owns:
//   W: [out, in] column-major at offset w   (out*in floats)
//   b: [out]                  at offset b   (out floats)
// DCNv2's cross layer l (cross.hpp) of width D and rank r owns:
//   V: [r, D] column-major at offset v, U: [D, r] at offset u, b: [D] at b.
// Bottom layers come first, then the cross layers (none with the dot
// interaction), then the top layers, each W followed by its b.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "model/arch.hpp"

namespace model {

struct layer_slot {
  std::size_t in = 0, out = 0;
  std::size_t w = 0; // offset of W in the flat buffer
  std::size_t b = 0; // offset of b
};

struct cross_slot {
  std::size_t width = 0, rank = 0;
  std::size_t v = 0, u = 0, b = 0; // offsets of V, U and b
};

class dense_layout {
public:
  explicit dense_layout(const arch& a);

  std::size_t size() const { return size_; } // total floats
  const std::vector<layer_slot>& bottom() const { return bottom_; }
  const std::vector<layer_slot>& top() const { return top_; }
  const std::vector<cross_slot>& cross() const { return cross_; }

  // Multiply-accumulates of the MLPs per example, forward only.
  std::size_t mlp_macs() const;
  // Multiply-accumulates of the cross layers' V and U per example, forward only.
  std::size_t cross_macs() const;

private:
  std::vector<layer_slot> bottom_, top_;
  std::vector<cross_slot> cross_;
  std::size_t size_ = 0;
};

// Buffers of dense parameters, gradients and accumulators: 64-byte aligned, so
// Eigen's vectorised kernels take the same path (and summation order) in
// every run; with std::vector's 16-byte alignment results drift in the last
// bits from run to run and runs stop being reproducible.
using float_buffer = std::vector<float, Eigen::aligned_allocator<float>>;

using const_matrix_map = Eigen::Map<const Eigen::MatrixXf>;
using matrix_map = Eigen::Map<Eigen::MatrixXf>;
using const_vector_map = Eigen::Map<const Eigen::VectorXf>;
using vector_map = Eigen::Map<Eigen::VectorXf>;

inline const_matrix_map weights(const float* buf, const layer_slot& s) {
  return const_matrix_map(buf + s.w, static_cast<Eigen::Index>(s.out),
                          static_cast<Eigen::Index>(s.in));
}
inline matrix_map weights(float* buf, const layer_slot& s) {
  return matrix_map(buf + s.w, static_cast<Eigen::Index>(s.out), static_cast<Eigen::Index>(s.in));
}
inline const_vector_map bias(const float* buf, const layer_slot& s) {
  return const_vector_map(buf + s.b, static_cast<Eigen::Index>(s.out));
}
inline vector_map bias(float* buf, const layer_slot& s) {
  return vector_map(buf + s.b, static_cast<Eigen::Index>(s.out));
}

// Initialises the flat buffer as the public DLRM code does:
// W ~ N(0, sqrt(2 / (in + out))), b ~ N(0, sqrt(1 / out)); cross layers as
// TorchRec's LowRankCrossNet does: V and U Xavier-normal, b zero.
// `params` must hold layout.size() floats.
void init_dense(const dense_layout& layout, float* params, std::uint64_t seed);

} // namespace model
