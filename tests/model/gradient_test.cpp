// Finite-difference checks of every backward pass: MLP layers, the dot
// interaction, and the whole model (dense parameters and embedding rows).
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/dlrm.hpp"
#include "model/interaction.hpp"
#include "model/metrics.hpp"
#include "model/mlp.hpp"
#include "tests/model/gradcheck.hpp"
#include "tests/model/whole_model_check.hpp"

namespace {

using testing::random_vector;

} // namespace

TEST_CASE("mlp backward matches finite differences (ReLU and linear last layer)") {
  std::mt19937 rng(7);
  for (bool relu_last : {true, false}) {
    model::arch a = testing::tiny_arch();
    model::dense_layout layout(a);
    std::vector<float> params(layout.size());
    model::init_dense(layout, params.data(), 11);
    const auto& layers = layout.bottom(); // 3 -> 5 -> 4
    const int batch = 3;
    std::vector<float> input = random_vector(3 * batch, rng);
    std::vector<float> r = random_vector(4 * batch, rng); // loss = sum(r .* out)
    auto loss = [&]() {
      std::vector<Eigen::MatrixXf> acts(layers.size() + 1);
      acts[0] = Eigen::Map<Eigen::MatrixXf>(input.data(), 3, batch);
      model::mlp_forward(params.data(), layers, relu_last, acts);
      double s = 0;
      for (int i = 0; i < 4 * batch; ++i)
        s += double(r[i]) * acts.back().data()[i];
      return s;
    };
    std::vector<Eigen::MatrixXf> acts(layers.size() + 1);
    acts[0] = Eigen::Map<Eigen::MatrixXf>(input.data(), 3, batch);
    model::mlp_forward(params.data(), layers, relu_last, acts);
    Eigen::MatrixXf d_out = Eigen::Map<Eigen::MatrixXf>(r.data(), 4, batch);
    Eigen::MatrixXf d_in, scratch;
    std::vector<float> grads(layout.size(), 0.0f);
    model::mlp_backward(params.data(), layers, relu_last, acts, d_out, grads.data(), &d_in,
                        scratch);
    const std::size_t bottom_params = layers.back().b + layers.back().out;
    // h = 1e-3: small enough not to cross ReLU kinks for these random values.
    testing::check_gradient(params.data(), grads.data(), bottom_params, loss, "mlp params",
                            1e-3);
    testing::check_gradient(input.data(), d_in.data(), input.size(), loss, "mlp input", 1e-3);
  }
}

TEST_CASE("interaction backward matches finite differences") {
  std::mt19937 rng(3);
  const std::size_t dim = 4, tables = 3, batch = 2;
  const std::size_t pairs = (tables + 1) * tables / 2; // 6
  std::vector<float> bottom = random_vector(dim * batch, rng);
  std::vector<float> emb = random_vector(dim * batch * tables, rng);
  std::vector<float> r = random_vector((dim + pairs) * batch, rng);
  model::interaction_scratch s;
  const model::embedding_input in{emb.data(), nullptr, batch * tables};
  auto loss = [&]() {
    Eigen::MatrixXf b = Eigen::Map<Eigen::MatrixXf>(bottom.data(), dim, batch);
    Eigen::MatrixXf z;
    model::interaction_forward(b, in, tables, s, z);
    double acc = 0;
    for (Eigen::Index i = 0; i < z.size(); ++i)
      acc += double(r[i]) * z.data()[i];
    return acc;
  };
  Eigen::MatrixXf b = Eigen::Map<Eigen::MatrixXf>(bottom.data(), dim, batch);
  Eigen::MatrixXf z;
  model::interaction_forward(b, in, tables, s, z);
  REQUIRE(z.rows() == Eigen::Index(dim + pairs));
  // Output layout: x first, then (1,0) = x . e_1, checked directly.
  CHECK(z(0, 0) == doctest::Approx(bottom[0]));
  double dot10 = 0;
  for (std::size_t k = 0; k < dim; ++k)
    dot10 += double(bottom[k]) * emb[k];
  CHECK(z(dim, 0) == doctest::Approx(dot10).epsilon(1e-5));
  Eigen::MatrixXf dz = Eigen::Map<Eigen::MatrixXf>(r.data(), dim + pairs, batch);
  Eigen::MatrixXf d_bottom;
  std::vector<float> d_emb(emb.size());
  model::interaction_backward(dz, in, tables, s, d_bottom, d_emb.data());
  // The interaction is quadratic, so central differences are exact up to rounding.
  testing::check_gradient(bottom.data(), d_bottom.data(), bottom.size(), loss, "bottom", 1e-2);
  testing::check_gradient(emb.data(), d_emb.data(), emb.size(), loss, "embeddings", 1e-2);
}

TEST_CASE("whole model: loss gradient w.r.t. every dense parameter and embedding value") {
  testing::check_whole_model_gradient(testing::tiny_arch());
}

TEST_CASE("presets have the sizes of DESIGN.md") {
  auto small = model::preset("small");
  REQUIRE(small);
  CHECK(small->bottom_sizes() == std::vector<std::size_t>{13, 64, 32, 16});
  CHECK(small->top_sizes() == std::vector<std::size_t>{367, 64, 32, 1});
  auto big = model::preset("dlrm-kaggle");
  REQUIRE(big);
  CHECK(big->bottom_sizes() == std::vector<std::size_t>{13, 512, 256, 64, 16});
  CHECK(big->top_sizes() == std::vector<std::size_t>{367, 512, 256, 1});
  CHECK_FALSE(model::preset("large"));
  // small: (13*64+64) + (64*32+32) + (32*16+16) + (367*64+64) + (64*32+32) + (32+1)
  //      = 896 + 2080 + 528 + 23552 + 2080 + 33 = 29,169 floats.
  CHECK(model::dense_layout(*small).size() == 29169);
  CHECK(model::parse_widths("512-256") == std::vector<std::size_t>{512, 256});
  CHECK_FALSE(model::parse_widths("512-"));
  CHECK_FALSE(model::parse_widths("0-3"));
  CHECK_FALSE(model::parse_widths("a"));
}
