// Multi-hot pooling (model/pooling.hpp): the pooled values of sum and mean,
// empty bags, bags of one id against the single-hot path, and the whole
// model's gradient through pooled bags (dot and dcn) by finite differences.
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/dlrm.hpp"
#include "model/pooling.hpp"
#include "tests/model/gradcheck.hpp"
#include "tests/model/whole_model_check.hpp"

namespace {

// 3 dense features, 2 tables, dim 4, bottom 3-5-4, top 7-6-1.
model::arch tiny_arch(model::pooling_kind p, model::interaction_kind k) {
  model::arch a = testing::tiny_arch();
  a.pooling = p;
  a.interaction = k;
  if (k == model::interaction_kind::dcn) {
    a.cross_layers = 2;
    a.cross_rank = 3;
  }
  return a;
}

// 4 examples x 2 tables = 8 bags over 3 rows: sizes 2, 1, 0 (empty), 3 (row 1
// twice), 1, 2, 4, 1; every row is used by several bags.
const std::vector<std::uint32_t> bag_offsets{0, 2, 3, 3, 6, 7, 9, 13, 14};
const std::vector<std::uint32_t> bag_rows{0, 1, 2, 1, 1, 0, 2, 0, 1, 2, 2, 0, 1, 0};

} // namespace

TEST_CASE("pooling: sum and mean of a bag's rows, an empty bag is zero") {
  const std::vector<float> rows{1, 2, 10, 20, 100, 200}; // 3 rows of dim 2
  const std::vector<std::uint32_t> index{0, 2, 1, 1};
  const std::vector<std::uint32_t> offsets{0, 2, 2, 4};  // {0, 2}, {}, {1, 1}
  const model::embedding_input in{rows.data(), index.data(), 3, offsets.data()};
  std::vector<float> out(6, -1.0f);
  model::pool_forward(in, 3, 2, model::pooling_kind::sum, out.data());
  CHECK(out == std::vector<float>{101, 202, 0, 0, 20, 40});
  model::pool_forward(in, 3, 2, model::pooling_kind::mean, out.data());
  CHECK(out == std::vector<float>{50.5f, 101, 0, 0, 10, 20});

  // Backward: row 1 gets both of bag 2's ids; mean weighs by 1/2.
  const std::vector<float> d_pooled{1, 2, 5, 5, 3, 4};
  std::vector<float> d_rows(6, -1.0f);
  model::pool_backward(in, 3, 2, model::pooling_kind::sum, d_pooled.data(), d_rows.data());
  CHECK(d_rows == std::vector<float>{1, 2, 6, 8, 1, 2});
  model::pool_backward(in, 3, 2, model::pooling_kind::mean, d_pooled.data(), d_rows.data());
  CHECK(d_rows == std::vector<float>{0.5f, 1, 3, 4, 0.5f, 1});
}

TEST_CASE("pooling: bags of one id give the single-hot model's logits and gradients") {
  for (auto p : {model::pooling_kind::sum, model::pooling_kind::mean}) {
    const auto a = tiny_arch(p, model::interaction_kind::dot);
    model::dlrm net(a);
    std::mt19937 rng(3);
    std::vector<float> params(net.layout().size());
    model::init_dense(net.layout(), params.data(), 7);
    const auto dense = testing::random_vector(4 * a.num_dense, rng);
    const auto emb = testing::random_vector(3 * a.dim, rng);
    const std::vector<float> labels{1, 0, 1, 0};
    const std::vector<std::uint32_t> index{0, 1, 2, 0, 1, 1, 0, 2};
    const std::vector<std::uint32_t> offsets{0, 1, 2, 3, 4, 5, 6, 7, 8};
    model::workspace w1, w2;
    std::vector<float> g1(params.size()), g2(params.size()), r1(emb.size()), r2(emb.size());
    net.forward_backward(params.data(), dense.data(), {emb.data(), index.data(), 3}, labels.data(),
                         4, w1, g1.data(), r1.data());
    net.forward_backward(params.data(), dense.data(), {emb.data(), index.data(), 3, offsets.data()},
                         labels.data(), 4, w2, g2.data(), r2.data());
    CHECK(w1.logits == w2.logits);
    CHECK(g1 == g2);
    CHECK(r1 == r2);
  }
}

TEST_CASE("pooling: whole model gradient through bags (sum and mean, dot and dcn)") {
  for (auto p : {model::pooling_kind::sum, model::pooling_kind::mean})
    for (auto k : {model::interaction_kind::dot, model::interaction_kind::dcn}) {
      CAPTURE(model::to_string(p));
      CAPTURE(model::to_string(k));
      testing::check_whole_model_gradient(tiny_arch(p, k), bag_rows, bag_offsets);
    }
}

TEST_CASE("pooling: sum and mean differ on bags of several ids") {
  const auto s = tiny_arch(model::pooling_kind::sum, model::interaction_kind::dot);
  const auto m = tiny_arch(model::pooling_kind::mean, model::interaction_kind::dot);
  model::dlrm ns(s), nm(m);
  std::mt19937 rng(4);
  std::vector<float> params(ns.layout().size());
  model::init_dense(ns.layout(), params.data(), 7);
  const auto dense = testing::random_vector(4 * s.num_dense, rng);
  const auto emb = testing::random_vector(3 * s.dim, rng);
  const model::embedding_input in{emb.data(), bag_rows.data(), 3, bag_offsets.data()};
  model::workspace ws, wm;
  ns.forward(params.data(), dense.data(), in, 4, ws);
  nm.forward(params.data(), dense.data(), in, 4, wm);
  CHECK(ws.logits != wm.logits);
}
