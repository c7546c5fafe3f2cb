// The interaction's packet kernels against a plain double-precision reference,
// at sizes that take every path: one to several packets per column, column
// groups cut short, the presets' 26 tables x dim 16, and more tables than four
// packets hold.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/interaction.hpp"

namespace {

struct shape {
  std::size_t dim, tables, batch;
};

void check_shape(const shape& sh) {
  CAPTURE(sh.dim);
  CAPTURE(sh.tables);
  std::mt19937 rng(unsigned(sh.dim * 131 + sh.tables));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const std::size_t d = sh.dim, t = sh.tables, b = sh.batch, n = t + 1;
  const std::size_t rows = t + 3; // fewer rows than uses: gradients must sum
  std::vector<float> emb(rows * d);
  for (auto& v : emb)
    v = u(rng);
  std::vector<std::uint32_t> index(b * t);
  for (auto& i : index)
    i = std::uint32_t(rng() % rows);
  Eigen::MatrixXf bottom(d, b);
  for (Eigen::Index i = 0; i < bottom.size(); ++i)
    bottom.data()[i] = u(rng);
  const model::embedding_input in{emb.data(), index.data(), rows};
  model::interaction_scratch s;
  Eigen::MatrixXf z;
  model::interaction_forward(bottom, in, t, s, z);
  REQUIRE(z.rows() == Eigen::Index(d + n * (n - 1) / 2));
  REQUIRE(z.cols() == Eigen::Index(b));
  auto vec = [&](std::size_t e, std::size_t i) {
    return i == 0 ? &bottom(0, Eigen::Index(e)) : emb.data() + index[e * t + i - 1] * d;
  };
  Eigen::MatrixXf dz(z.rows(), z.cols());
  for (Eigen::Index i = 0; i < dz.size(); ++i)
    dz.data()[i] = u(rng);
  std::vector<double> want_bottom(d * b, 0.0), want_rows(rows * d, 0.0);
  for (std::size_t e = 0; e < b; ++e) {
    for (std::size_t k = 0; k < d; ++k) {
      CHECK(z(Eigen::Index(k), Eigen::Index(e)) == bottom(Eigen::Index(k), Eigen::Index(e)));
      want_bottom[e * d + k] += dz(Eigen::Index(k), Eigen::Index(e));
    }
    std::size_t p = d;
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j, ++p) {
        const float *vi = vec(e, i), *vj = vec(e, j);
        double dot = 0;
        for (std::size_t k = 0; k < d; ++k)
          dot += double(vi[k]) * vj[k];
        CHECK(z(Eigen::Index(p), Eigen::Index(e)) == doctest::Approx(dot).epsilon(1e-5));
        const double g = dz(Eigen::Index(p), Eigen::Index(e));
        double* gi = i == 0 ? &want_bottom[e * d] : &want_rows[index[e * t + i - 1] * d];
        double* gj = j == 0 ? &want_bottom[e * d] : &want_rows[index[e * t + j - 1] * d];
        for (std::size_t k = 0; k < d; ++k) {
          gi[k] += g * vj[k];
          gj[k] += g * vi[k];
        }
      }
  }
  Eigen::MatrixXf d_bottom;
  std::vector<float> d_rows(rows * d, 123.0f); // overwritten, not added to
  model::interaction_backward(dz, in, t, s, d_bottom, d_rows.data());
  for (std::size_t i = 0; i < d * b; ++i)
    CHECK(d_bottom.data()[i] == doctest::Approx(want_bottom[i]).epsilon(1e-4));
  for (std::size_t i = 0; i < rows * d; ++i)
    CHECK(d_rows[i] == doctest::Approx(want_rows[i]).epsilon(1e-4));
}

} // namespace

TEST_CASE("interaction matches a double-precision reference at every kernel path") {
  for (const shape sh : {shape{16, 26, 5}, shape{4, 3, 2}, shape{1, 1, 3}, shape{5, 7, 3},
                         shape{3, 8, 2}, shape{16, 15, 2}, shape{7, 40, 2}, shape{32, 70, 2},
                         shape{17, 31, 3}})
    check_shape(sh);
}

TEST_CASE("interaction: the same bits on every call, whatever the buffers held") {
  const std::size_t d = 16, t = 26, b = 4;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> emb(b * t * d);
  for (auto& v : emb)
    v = u(rng);
  Eigen::MatrixXf bottom(d, b), dz(d + (t + 1) * t / 2, b);
  for (Eigen::Index i = 0; i < bottom.size(); ++i)
    bottom.data()[i] = u(rng);
  for (Eigen::Index i = 0; i < dz.size(); ++i)
    dz.data()[i] = u(rng);
  const model::embedding_input in{emb.data(), nullptr, b * t};
  model::interaction_scratch s1, s2;
  Eigen::MatrixXf z1, z2, db1, db2;
  std::vector<float> r1(emb.size()), r2(emb.size());
  model::interaction_forward(bottom, in, t, s1, z1);
  model::interaction_backward(dz, in, t, s1, db1, r1.data());
  s2.tcat.setConstant(16 * 32 * b, b, 7.0f); // stale contents must not leak in
  s2.tv.setConstant(16, 27, -3.0f);
  std::fill(r2.begin(), r2.end(), 5.0f); // every row gradient is written, none added to
  model::interaction_forward(bottom, in, t, s2, z2);
  model::interaction_backward(dz, in, t, s2, db2, r2.data());
  CHECK(z1 == z2);
  CHECK(db1 == db2);
  CHECK(r1 == r2);
}

TEST_CASE("interaction backward: shared rows, in first-use or any numbering, sum their uses") {
  const std::size_t d = 16, t = 26, b = 5, rows = 40;
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<std::uint32_t> pick(0, 29); // rows 30..39: no use
  std::vector<float> table(rows * d);
  for (auto& v : table)
    v = u(rng);
  std::vector<std::uint32_t> use(b * t);
  for (auto& i : use)
    i = pick(rng);
  // First-use numbering (the sparse_index's inverse) and the table reordered to match.
  std::vector<std::uint32_t> first(b * t), number(rows, ~0u);
  std::uint32_t next = 0;
  for (std::size_t i = 0; i < use.size(); ++i) {
    if (number[use[i]] == ~0u)
      number[use[i]] = next++;
    first[i] = number[use[i]];
  }
  for (std::uint32_t r = 0; r < rows; ++r)
    if (number[r] == ~0u)
      number[r] = next++;
  std::vector<float> renumbered(rows * d);
  for (std::uint32_t r = 0; r < rows; ++r)
    std::copy_n(table.begin() + r * d, d, renumbered.begin() + number[r] * d);
  std::vector<float> expanded(b * t * d);
  for (std::size_t i = 0; i < use.size(); ++i)
    std::copy_n(table.begin() + use[i] * d, d, expanded.begin() + i * d);
  Eigen::MatrixXf bottom(d, b), dz(d + (t + 1) * t / 2, b);
  for (Eigen::Index i = 0; i < bottom.size(); ++i)
    bottom.data()[i] = u(rng);
  for (Eigen::Index i = 0; i < dz.size(); ++i)
    dz.data()[i] = u(rng);
  auto backward = [&](const model::embedding_input& in, std::vector<float>& d_rows) {
    model::interaction_scratch s;
    Eigen::MatrixXf z, db;
    std::fill(d_rows.begin(), d_rows.end(), 9.0f); // stale
    model::interaction_forward(bottom, in, t, s, z);
    model::interaction_backward(dz, in, t, s, db, d_rows.data());
    return db;
  };
  std::vector<float> per_use(b * t * d), by_use(rows * d), by_first(rows * d);
  const Eigen::MatrixXf db_exp = backward({expanded.data(), nullptr, b * t}, per_use);
  const Eigen::MatrixXf db_use = backward({table.data(), use.data(), rows}, by_use);
  const Eigen::MatrixXf db_first = backward({renumbered.data(), first.data(), rows}, by_first);
  // The expected sums: zero, then each use added in example order.
  std::vector<float> want(rows * d, 0.0f);
  for (std::size_t i = 0; i < use.size(); ++i)
    for (std::size_t k = 0; k < d; ++k)
      want[use[i] * d + k] += per_use[i * d + k];
  CHECK(db_use == db_exp);
  CHECK(db_first == db_exp);
  CHECK(by_use == want);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < d; ++k)
      REQUIRE(by_first[number[r] * d + k] == want[r * d + k]);
}
