#pragma once
// Optimisers. Each is a parameter struct with commented defaults plus apply();
// the caller owns parameters and accumulators. All are safe to call
// concurrently on the same buffers in the Hogwild sense (racy but never out of
// bounds); see actors' hogwild notes for why that is acceptable.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace model {

// `count` is an instrument, not a learner: it leaves the weights alone and
// counts updates in the optimiser state (dense: +1 on every state float per
// batch, atomically, so Hogwild workers lose none; sparse: +1 on the row's
// one state float per push of the row, in the shard's one thread). The
// checkpoint-cut test reads the counts back (tests/cluster/cluster_cut_test.cpp).
enum class dense_optimizer_kind { sgd, adagrad, count };
enum class sparse_optimizer_kind { sgd, rowwise_adagrad, adagrad, count };

std::optional<dense_optimizer_kind> parse_dense_optimizer(const std::string& name);
std::optional<sparse_optimizer_kind> parse_sparse_optimizer(const std::string& name);
// The names the parsers take: "adagrad", "rowwise-adagrad", ...
std::string to_string(dense_optimizer_kind k);
std::string to_string(sparse_optimizer_kind k);

// Dense optimiser over n contiguous floats.
struct dense_optimizer {
  dense_optimizer_kind kind = dense_optimizer_kind::adagrad;
  float lr = 0.03f;   // learning rate
  float eps = 1e-8f;  // Adagrad: w -= lr * g / (sqrt(acc) + eps)
  // Warm-up: over the first `warmup` examples the rate ramps linearly from
  // 0 to lr (0: none). `examples` counts the batch being applied.
  std::uint64_t warmup = 0;

  // This optimiser with the rate it has after `examples` examples.
  dense_optimizer at(std::uint64_t examples) const {
    dense_optimizer o = *this;
    if (examples < warmup)
      o.lr = float(double(lr) * double(examples) / double(warmup));
    return o;
  }

  // SGD: w -= lr * g. Adagrad: acc += g^2; w -= lr * g / (sqrt(acc) + eps).
  // acc may be null for SGD; for Adagrad it holds n floats, initially 0.
  void apply(float* w, float* acc, const float* g, std::size_t n) const;
};

// Sparse optimiser for one embedding row of `dim` floats with gradient g (the
// sum over every occurrence of the row in the batch).
//   sgd:             w -= lr * g                                (no state)
//   rowwise-adagrad: m += mean(g^2); w -= lr * g / (sqrt(m) + eps)   (1 float per row)
//   adagrad:         a += g^2 (per element); w -= lr * g / (sqrt(a) + eps) (dim floats per row)
struct sparse_optimizer {
  sparse_optimizer_kind kind = sparse_optimizer_kind::rowwise_adagrad;
  float lr = 0.03f;  // learning rate
  float eps = 1e-8f; // Adagrad epsilon, added after the square root

  // Accumulator floats each row needs for this optimiser: 0, 1 or dim.
  std::size_t state_per_row(std::size_t dim) const {
    return kind == sparse_optimizer_kind::sgd ? 0
           : kind == sparse_optimizer_kind::adagrad ? dim : 1; // rowwise-adagrad, count: 1
  }

  // acc: the row's state_per_row(dim) accumulators (unused by SGD).
  void apply(float* row, float* acc, const float* g, std::size_t dim) const {
    if (kind == sparse_optimizer_kind::sgd) {
      for (std::size_t i = 0; i < dim; ++i)
        row[i] -= lr * g[i];
      return;
    }
    if (kind == sparse_optimizer_kind::count) {
      *acc += 1.0f;
      return;
    }
    if (kind == sparse_optimizer_kind::adagrad) {
      for (std::size_t i = 0; i < dim; ++i) {
        acc[i] += g[i] * g[i];
        row[i] -= lr * g[i] / (std::sqrt(acc[i]) + eps);
      }
      return;
    }
    float& m = *acc;
    float sq = 0.0f;
    for (std::size_t i = 0; i < dim; ++i)
      sq += g[i] * g[i];
    float mm = m + sq / static_cast<float>(dim);
    m = mm;
    const float scale = lr / (std::sqrt(mm) + eps);
    for (std::size_t i = 0; i < dim; ++i)
      row[i] -= scale * g[i];
  }
};

} // namespace model
