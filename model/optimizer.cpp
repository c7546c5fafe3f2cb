#include "model/optimizer.hpp"

namespace model {

std::optional<dense_optimizer_kind> parse_dense_optimizer(const std::string& name) {
  for (auto k : {dense_optimizer_kind::sgd, dense_optimizer_kind::adagrad, dense_optimizer_kind::count})
    if (to_string(k) == name)
      return k;
  return std::nullopt;
}

std::optional<sparse_optimizer_kind> parse_sparse_optimizer(const std::string& name) {
  for (auto k : {sparse_optimizer_kind::sgd, sparse_optimizer_kind::rowwise_adagrad,
                 sparse_optimizer_kind::adagrad, sparse_optimizer_kind::count})
    if (to_string(k) == name)
      return k;
  return std::nullopt;
}

std::string to_string(dense_optimizer_kind k) {
  switch (k) {
    case dense_optimizer_kind::sgd: return "sgd";
    case dense_optimizer_kind::adagrad: return "adagrad";
    case dense_optimizer_kind::count: return "count";
  }
  return "?";
}

std::string to_string(sparse_optimizer_kind k) {
  switch (k) {
    case sparse_optimizer_kind::sgd: return "sgd";
    case sparse_optimizer_kind::rowwise_adagrad: return "rowwise-adagrad";
    case sparse_optimizer_kind::adagrad: return "adagrad";
    case sparse_optimizer_kind::count: return "count";
  }
  return "?";
}

void dense_optimizer::apply(float* w, float* acc, const float* g, std::size_t n) const {
  if (kind == dense_optimizer_kind::sgd) {
    for (std::size_t i = 0; i < n; ++i)
      w[i] -= lr * g[i];
    return;
  }
  if (kind == dense_optimizer_kind::count) {
    // Atomic per element: Hogwild workers sharing a replica never lose a count.
    for (std::size_t i = 0; i < n; ++i) {
      float old;
      __atomic_load(&acc[i], &old, __ATOMIC_RELAXED);
      float next = old + 1.0f;
      while (!__atomic_compare_exchange(&acc[i], &old, &next, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        next = old + 1.0f;
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const float a = acc[i] + g[i] * g[i];
    acc[i] = a;
    w[i] -= lr * g[i] / (std::sqrt(a) + eps);
  }
}

} // namespace model
