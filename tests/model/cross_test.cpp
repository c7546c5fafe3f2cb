// DCNv2's cross layers (model/cross.hpp): the forward pass against the
// formula, finite-difference checks of every backward term, the whole dcn
// model, and the presets' shapes.
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/cross.hpp"
#include "model/dlrm.hpp"
#include "model/metrics.hpp"
#include "tests/model/gradcheck.hpp"
#include "tests/model/whole_model_check.hpp"

namespace {

using testing::random_vector;

// 3 dense features, 2 tables, dim 4 (D = 12), bottom 3-5-4, 2 cross layers
// of rank 3, top 12-6-1.
model::arch tiny_dcn() {
  model::arch a = testing::tiny_arch();
  a.interaction = model::interaction_kind::dcn;
  a.cross_layers = 2;
  a.cross_rank = 3;
  return a;
}

} // namespace

TEST_CASE("a cross layer computes x0 .* (U V x0 + b) + x0") {
  std::mt19937 rng(1);
  model::arch a = tiny_dcn();
  a.cross_layers = 1;
  model::dense_layout layout(a);
  REQUIRE(layout.cross().size() == 1);
  const auto& c = layout.cross()[0];
  CHECK(c.width == 12);
  CHECK(c.rank == 3);
  std::vector<float> params = random_vector(layout.size(), rng, 0.5f);
  const std::size_t batch = 2;
  std::vector<float> bottom = random_vector(a.dim * batch, rng);
  std::vector<float> emb = random_vector(a.dim * 3, rng);
  const std::vector<std::uint32_t> index{2, 0, 1, 2}; // (e, t) -> row
  const model::embedding_input in{emb.data(), index.data(), 3};
  model::cross_scratch s;
  Eigen::MatrixXf out;
  model::cross_forward(params.data(), layout.cross(), Eigen::Map<Eigen::MatrixXf>(bottom.data(), 4, 2),
                       in, a.num_tables, s, out);
  REQUIRE(out.rows() == 12);
  REQUIRE(out.cols() == 2);
  for (std::size_t e = 0; e < batch; ++e) {
    std::vector<double> x0(12);
    for (std::size_t k = 0; k < 4; ++k) {
      x0[k] = bottom[e * 4 + k];
      x0[4 + k] = emb[index[e * 2] * 4 + k];
      x0[8 + k] = emb[index[e * 2 + 1] * 4 + k];
    }
    std::vector<double> h(3, 0.0);
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t d = 0; d < 12; ++d)
        h[r] += double(params[c.v + d * 3 + r]) * x0[d]; // V [3, 12] column-major
    for (std::size_t d = 0; d < 12; ++d) {
      double g = params[c.b + d];
      for (std::size_t r = 0; r < 3; ++r)
        g += double(params[c.u + r * 12 + d]) * h[r]; // U [12, 3] column-major
      CHECK(out(Eigen::Index(d), Eigen::Index(e)) == doctest::Approx(x0[d] * g + x0[d]).epsilon(1e-5));
    }
  }
}

TEST_CASE("cross layers' backward matches finite differences (parameters, bottom, shared rows)") {
  std::mt19937 rng(9);
  const model::arch a = tiny_dcn();
  model::dense_layout layout(a);
  std::vector<float> params(layout.size());
  model::init_dense(layout, params.data(), 5);
  for (const auto& c : layout.cross()) // non-zero biases, so their gradients are checked too
    for (std::size_t d = 0; d < c.width; ++d)
      params[c.b + d] = 0.3f * float(d % 5) - 0.6f;
  const std::size_t batch = 3;
  std::vector<float> bottom = random_vector(a.dim * batch, rng);
  std::vector<float> emb = random_vector(a.dim * 4, rng, 0.7f);
  const std::vector<std::uint32_t> index{0, 1, 2, 0, 3, 3}; // rows 0 and 3 used twice
  const model::embedding_input in{emb.data(), index.data(), 4};
  std::vector<float> r = random_vector(12 * batch, rng); // loss = sum(r .* out)
  model::cross_scratch s;
  auto loss = [&]() {
    Eigen::MatrixXf out;
    model::cross_forward(params.data(), layout.cross(),
                         Eigen::Map<Eigen::MatrixXf>(bottom.data(), 4, Eigen::Index(batch)), in,
                         a.num_tables, s, out);
    double acc = 0;
    for (Eigen::Index i = 0; i < out.size(); ++i)
      acc += double(r[std::size_t(i)]) * out.data()[i];
    return acc;
  };
  loss();
  std::vector<float> grads(layout.size(), 0.0f), d_emb(emb.size(), 1.0f);
  Eigen::MatrixXf d_bottom;
  model::cross_backward(params.data(), layout.cross(),
                        Eigen::Map<Eigen::MatrixXf>(r.data(), 12, Eigen::Index(batch)), in,
                        a.num_tables, s, grads.data(), d_bottom, d_emb.data());
  const std::size_t first = layout.cross().front().v;
  const std::size_t last = layout.cross().back().b + layout.cross().back().width;
  testing::check_gradient(params.data() + first, grads.data() + first, last - first, loss,
                          "cross params", 1e-2, 1e-3);
  testing::check_gradient(bottom.data(), d_bottom.data(), bottom.size(), loss, "bottom", 1e-2, 1e-3);
  testing::check_gradient(emb.data(), d_emb.data(), emb.size(), loss, "shared rows", 1e-2, 1e-3);
}

TEST_CASE("whole dcn model: loss gradient w.r.t. every dense parameter and embedding value") {
  const model::arch a = tiny_dcn();
  CHECK(model::dlrm(a).layout().top().front().in == 12); // the top MLP reads x_L
  testing::check_whole_model_gradient(a);
}

TEST_CASE("dcn presets: MLPerf's DLRM-DCNv2 and its scaled-down twin") {
  auto big = model::preset("dlrm-dcnv2");
  REQUIRE(big);
  CHECK(big->interaction == model::interaction_kind::dcn);
  CHECK(big->dim == 128);
  CHECK(big->cross_layers == 3);
  CHECK(big->cross_rank == 512);
  CHECK(big->bottom_sizes() == std::vector<std::size_t>{13, 512, 256, 128});
  CHECK(big->top_sizes() == std::vector<std::size_t>{3456, 1024, 1024, 512, 256, 1});
  const model::dense_layout layout(*big);
  REQUIRE(layout.cross().size() == 3);
  CHECK(layout.cross_macs() == 3 * 2 * 3456 * 512);
  // The cross layers sit between the bottom and the top MLP in the buffer.
  CHECK(layout.cross().front().v == layout.bottom().back().b + 128);
  CHECK(layout.top().front().w == layout.cross().back().b + 3456);
  auto small = model::preset("dcnv2-small");
  REQUIRE(small);
  CHECK(small->top_sizes() == std::vector<std::size_t>{432, 64, 32, 1});
  CHECK(small->describe() ==
        "bottom 13-64-32-16, 3 cross layers of rank 64, top 432-64-32-1, dim 16, 26 tables x 100000 rows");
  // The dot presets are unchanged: no cross layers, the same buffer.
  CHECK(model::dense_layout(*model::preset("small")).cross().empty());
  CHECK(model::dense_layout(*model::preset("small")).size() == 29169);
}
