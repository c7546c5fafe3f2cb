#pragma once
// The whole model's loss gradient against finite differences, for any
// architecture (dot or dcn): every dense parameter and every value of three
// embedding rows shared by the batch's 4 x num_tables (example, table) slots
// (num_tables = 2), so a row's gradient must sum over every use. With bags
// (multi-hot, offsets [9]), index lists the row of every id instead: the
// fields pool them (arch::pooling) and the rows get the pooled gradient.
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/dlrm.hpp"
#include "model/metrics.hpp"
#include "tests/model/gradcheck.hpp"

namespace testing {

// A tiny architecture so every coordinate can be checked: 3 dense features,
// 2 tables, dim 4, bottom 3-5-4, top (interaction)-6-1, 10 rows per table.
inline model::arch tiny_arch() {
  model::arch a;
  a.num_dense = 3;
  a.num_tables = 2;
  a.dim = 4;
  a.bottom_hidden = {5};
  a.top_hidden = {6};
  a.rows_per_table = 10;
  return a;
}

inline void check_whole_model_gradient(const model::arch& a,
                                       const std::vector<std::uint32_t>& index = {0, 1, 2, 0, 1,
                                                                                  1, 0, 2},
                                       const std::vector<std::uint32_t>& offsets = {}) {
  REQUIRE(a.num_tables == 2);
  std::mt19937 rng(5);
  model::dlrm net(a);
  const std::size_t batch = 4;
  std::vector<float> params(net.layout().size());
  model::init_dense(net.layout(), params.data(), 99);
  std::vector<float> dense = random_vector(batch * a.num_dense, rng);
  std::vector<float> labels{1, 0, 0, 1};
  std::vector<float> emb = random_vector(a.dim * 3, rng, 0.5f);
  REQUIRE((offsets.empty() ? index.size() == 8 : offsets.size() == 9 && offsets.back() == index.size()));
  const model::embedding_input in{emb.data(), index.data(), 3,
                                  offsets.empty() ? nullptr : offsets.data()};
  model::workspace ws;
  auto mean_loss = [&]() {
    net.forward(params.data(), dense.data(), in, batch, ws);
    double s = 0;
    for (std::size_t e = 0; e < batch; ++e)
      s += model::bce_with_logit(ws.logits[Eigen::Index(e)], labels[e]);
    return s / double(batch);
  };
  std::vector<float> gp(params.size()), ge(emb.size());
  net.forward_backward(params.data(), dense.data(), in, labels.data(), batch, ws, gp.data(),
                       ge.data());
  CHECK(ws.loss_sum / batch == doctest::Approx(mean_loss()).epsilon(1e-6));
  check_gradient(params.data(), gp.data(), params.size(), mean_loss, "dense params", 1e-3, 1e-4);
  check_gradient(emb.data(), ge.data(), emb.size(), mean_loss, "shared embedding rows", 1e-3,
                 1e-4);
}

} // namespace testing
