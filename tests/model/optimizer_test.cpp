// Optimiser steps against values computed by hand.
#include <algorithm>
#include <cmath>
#include <vector>

#include <doctest/doctest.h>

#include "model/embedding.hpp"
#include "model/optimizer.hpp"

TEST_CASE("dense SGD: w -= lr * g") {
  model::dense_optimizer opt{model::dense_optimizer_kind::sgd, 0.1f};
  std::vector<float> w{1.0f, -2.0f}, g{0.5f, -1.0f};
  opt.apply(w.data(), nullptr, g.data(), 2);
  CHECK(w[0] == doctest::Approx(0.95)); // 1 - 0.1*0.5
  CHECK(w[1] == doctest::Approx(-1.9)); // -2 + 0.1*1
}

TEST_CASE("dense Adagrad: two steps by hand") {
  model::dense_optimizer opt{model::dense_optimizer_kind::adagrad, 0.1f, 1e-8f};
  std::vector<float> w{1.0f}, acc{0.0f}, g{2.0f};
  opt.apply(w.data(), acc.data(), g.data(), 1);
  // acc = 4, w = 1 - 0.1 * 2 / 2 = 0.9
  CHECK(acc[0] == doctest::Approx(4.0));
  CHECK(w[0] == doctest::Approx(0.9));
  g[0] = 1.0f;
  opt.apply(w.data(), acc.data(), g.data(), 1);
  // acc = 5, w = 0.9 - 0.1 * 1 / sqrt(5) = 0.855278640
  CHECK(acc[0] == doctest::Approx(5.0));
  CHECK(w[0] == doctest::Approx(0.9 - 0.1 / std::sqrt(5.0)));
}

TEST_CASE("dense warm-up: the rate ramps linearly over the first examples, then stays") {
  model::dense_optimizer opt{model::dense_optimizer_kind::sgd, 0.2f};
  CHECK(opt.at(0).lr == 0.2f); // no warm-up: the rate from the first example
  opt.warmup = 1000;
  CHECK(opt.at(0).lr == 0.0f);
  CHECK(opt.at(250).lr == doctest::Approx(0.05));
  CHECK(opt.at(999).lr == doctest::Approx(0.1998));
  CHECK(opt.at(1000).lr == 0.2f);
  CHECK(opt.at(5000).lr == 0.2f);
  std::vector<float> w{1.0f}, g{1.0f};
  opt.at(500).apply(w.data(), nullptr, g.data(), 1);
  CHECK(w[0] == doctest::Approx(0.9)); // half the rate
}

TEST_CASE("row-wise Adagrad keeps one accumulator per row: m += mean(g^2)") {
  model::sparse_optimizer opt{model::sparse_optimizer_kind::rowwise_adagrad, 0.5f, 1e-8f};
  std::vector<float> row{1.0f, 1.0f}, g{3.0f, 4.0f};
  float m = 0.0f;
  opt.apply(row.data(), &m, g.data(), 2);
  // m = (9 + 16) / 2 = 12.5; scale = 0.5 / sqrt(12.5) = 0.141421356
  CHECK(m == doctest::Approx(12.5));
  CHECK(row[0] == doctest::Approx(1.0 - 3.0 * 0.5 / std::sqrt(12.5)));
  CHECK(row[1] == doctest::Approx(1.0 - 4.0 * 0.5 / std::sqrt(12.5)));
  model::sparse_optimizer sgd{model::sparse_optimizer_kind::sgd, 0.5f};
  std::vector<float> r2{1.0f, 1.0f};
  sgd.apply(r2.data(), nullptr, g.data(), 2);
  CHECK(r2[0] == doctest::Approx(-0.5)); // 1 - 0.5*3
  CHECK(sgd.state_per_row(16) == 0);
}

TEST_CASE("element-wise sparse Adagrad keeps one accumulator per value") {
  model::sparse_optimizer opt{model::sparse_optimizer_kind::adagrad, 0.5f, 0.0f};
  std::vector<float> row{1.0f, 1.0f}, g{3.0f, 4.0f}, acc{0.0f, 0.0f};
  opt.apply(row.data(), acc.data(), g.data(), 2);
  // acc = (9, 16); each value moves by lr * g / |g| = 0.5
  CHECK(acc[0] == doctest::Approx(9.0));
  CHECK(acc[1] == doctest::Approx(16.0));
  CHECK(row[0] == doctest::Approx(0.5));
  CHECK(row[1] == doctest::Approx(0.5));
  CHECK(opt.state_per_row(16) == 16);
}

TEST_CASE("sparse_index de-duplicates keys; batch_lookup gathers each unique row once") {
  // keys: a b a c b a -> unique a b c; inverse 0 1 0 2 1 0
  std::vector<std::uint64_t> keys{model::row_key(0, 5), model::row_key(1, 5),
                                  model::row_key(0, 5), model::row_key(2, 9),
                                  model::row_key(1, 5), model::row_key(0, 5)};
  model::sparse_index idx;
  idx.build(keys.data(), keys.size());
  REQUIRE(idx.unique().size() == 3);
  CHECK(idx.unique()[0] == keys[0]);
  CHECK(idx.inverse() == std::vector<std::uint32_t>{0, 1, 0, 2, 1, 0});
  // Two examples of 3 tables with hashes 5, 5, 9 | 5, 5, 5 (rows = 10): the keys
  // (0,5) (1,5) (2,9) (0,5) (1,5) (2,5) have 4 distinct rows; each example's
  // column reads back the row of its own table.
  model::arch a;
  a.num_tables = 3;
  a.dim = 2;
  a.rows_per_table = 10;
  model::embedding_tables t(3, 10, 2);
  t.init(1);
  const std::vector<std::uint64_t> hashes{5, 5, 9, 5, 5, 5};
  model::batch_lookup bl;
  bl.lookup(hashes.data(), 2, a, t);
  CHECK(bl.index.unique().size() == 4);
  const auto in = bl.input();
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    const float* want = t.row(model::row_key(i % 3, hashes[i] % 10));
    CHECK(in.column(i, 2)[0] == want[0]);
    CHECK(in.column(i, 2)[1] == want[1]);
  }
  CHECK(model::key_table(keys[3]) == 2);
  CHECK(model::key_row(keys[3]) == 9);
}

TEST_CASE("sparse_index handles a large batch with many collisions in the probe table") {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t i = 0; i < 5000; ++i)
    keys.push_back(model::row_key(i % 26, (i * 7919) % 300));
  model::sparse_index idx;
  idx.build(keys.data(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    REQUIRE(idx.unique()[idx.inverse()[i]] == keys[i]);
  // (table, row) pairs repeat with period lcm(26, 300) = 3900 -> 3900 distinct keys.
  CHECK(idx.unique().size() == 3900);
}

TEST_CASE("embedding tables apply row-wise Adagrad only to touched rows") {
  model::embedding_tables t(2, 4, 2);
  t.init(1);
  const float before_untouched = t.row(model::row_key(1, 3))[0];
  std::vector<std::uint64_t> keys{model::row_key(0, 1), model::row_key(0, 1)};
  model::sparse_index idx;
  idx.build(keys.data(), keys.size());
  const float w0 = t.row(keys[0])[0];
  std::vector<float> grad{2.0f, 0.0f}; // reduced gradient of the one unique row
  model::sparse_optimizer opt{model::sparse_optimizer_kind::rowwise_adagrad, 0.1f, 0.0f};
  t.apply(idx, grad.data(), opt);
  // m = (4 + 0) / 2 = 2; w -= 0.1 * 2 / sqrt(2)
  CHECK(*t.accumulator(keys[0]) == doctest::Approx(2.0));
  CHECK(t.row(keys[0])[0] == doctest::Approx(w0 - 0.2 / std::sqrt(2.0)));
  CHECK(t.row(model::row_key(1, 3))[0] == before_untouched);
}

TEST_CASE("embedding tables init: default bound sqrt(1/rows), or the one given") {
  model::embedding_tables t(2, 4, 8); // 2 tables x 4 rows: default bound sqrt(1/4) = 0.5
  auto max_abs = [&t] {
    float m = 0.0f;
    for (std::size_t table = 0; table < 2; ++table)
      for (std::uint64_t r = 0; r < 4; ++r)
        for (std::size_t j = 0; j < 8; ++j)
          m = std::max(m, std::abs(t.row(model::row_key(table, r))[j]));
    return m;
  };
  t.init(7);
  CHECK(max_abs() <= 0.5f);
  CHECK(max_abs() > 0.25f); // 64 draws from U(-0.5, 0.5): some exceed 0.25
  t.init(7, 0.01f);         // e.g. a shard of a 10000-row table: sqrt(1/10000)
  CHECK(max_abs() <= 0.01f);
  CHECK(max_abs() > 0.005f);
  CHECK(*t.accumulator(model::row_key(1, 3)) == 0.0f);
}
