// DCT for the embedding traffic (model/dct_mp.hpp): one threshold per table,
// refreshed on schedule; the mask of a push is what the forward pass
// received; per-row error feedback loses nothing of a row's gradients.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "model/dct_mp.hpp"
#include "model/embedding.hpp"

namespace {

using model::row_key;

// n rows of dim entries; rows of table 1 are 100 x smaller than table 0's.
struct reply {
  std::vector<std::uint64_t> keys;
  std::vector<float> rows;
};

reply two_tables(std::size_t n, std::size_t dim, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  reply r;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t = i % 2;
    r.keys.push_back(row_key(t, i));
    for (std::size_t j = 0; j < dim; ++j)
      r.rows.push_back(d(g) * (t == 0 ? 1.0f : 0.01f));
  }
  return r;
}

// Entries of table t among those sent, and of those in the reply.
std::pair<std::size_t, std::size_t> sent_of_table(const reply& r, std::size_t dim,
                                                  const model::sparse_vector& out,
                                                  std::size_t t) {
  std::size_t sent = 0, all = 0;
  for (auto idx : out.index)
    sent += model::key_table(r.keys[idx / dim]) == t ? 1 : 0;
  for (auto k : r.keys)
    all += model::key_table(k) == t ? dim : 0;
  return {sent, all};
}

} // namespace

TEST_CASE("dct mp: each table gets its own threshold, so a table of small rows keeps its share") {
  const std::size_t dim = 16;
  const auto r = two_tables(2000, dim, 5);
  model::dct_row_thresholds th(2, 0.1, 10, 7);
  model::sparse_vector out;
  th.encode(r.keys.data(), r.rows.data(), r.keys.size(), dim, out);
  CHECK(out.size == r.rows.size());
  for (std::size_t t = 0; t < 2; ++t) {
    const auto [sent, all] = sent_of_table(r, dim, out, t);
    CHECK(double(sent) / double(all) == doctest::Approx(0.1).epsilon(0.25)); // within 0.075-0.125
  }
  CHECK(th.tau(0) > 50 * th.tau(1)); // one threshold for both would send table 1 nothing
  // Every sent entry is the row's value and passes its table's threshold;
  // every entry not sent is below it.
  std::size_t k = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const float tau = th.tau(model::key_table(r.keys[i / dim]));
    if (k < out.nnz() && out.index[k] == i) {
      CHECK(out.value[k] == r.rows[i]);
      CHECK(std::fabs(r.rows[i]) >= tau);
      ++k;
    } else {
      CHECK(std::fabs(r.rows[i]) < tau);
    }
  }
  CHECK(k == out.nnz());
  CHECK(th.counts().values == out.nnz());
  CHECK(th.counts().entries == r.rows.size());
}

TEST_CASE("dct mp: a table's threshold is re-estimated every `refresh` replies that touch it") {
  const std::size_t dim = 4;
  const auto both = two_tables(200, dim, 1);
  reply only0; // table 0's rows only
  for (std::size_t i = 0; i < both.keys.size(); i += 2) {
    only0.keys.push_back(both.keys[i]);
    only0.rows.insert(only0.rows.end(), both.rows.begin() + long(i * dim),
                      both.rows.begin() + long((i + 1) * dim));
  }
  model::dct_row_thresholds th(2, 0.2, 3, 9);
  model::sparse_vector out;
  // Table 0 in 7 replies (estimates at its uses 0, 3, 6), table 1 in 2 (use 0).
  th.encode(both.keys.data(), both.rows.data(), both.keys.size(), dim, out);
  CHECK(th.counts().refreshes == 2);
  for (int i = 0; i < 5; ++i)
    th.encode(only0.keys.data(), only0.rows.data(), only0.keys.size(), dim, out);
  CHECK(th.counts().refreshes == 3);
  const float tau1 = th.tau(1);
  th.encode(both.keys.data(), both.rows.data(), both.keys.size(), dim, out);
  CHECK(th.counts().refreshes == 4);
  CHECK(th.tau(1) == tau1); // table 1's second use: no estimate
}

TEST_CASE("dct mp: keep 1 sends every nonzero entry") {
  const std::size_t dim = 8;
  auto r = two_tables(50, dim, 3);
  r.rows[5] = 0.0f;
  model::dct_row_thresholds th(2, 1.0, 10, 1);
  model::sparse_vector out;
  th.encode(r.keys.data(), r.rows.data(), r.keys.size(), dim, out);
  CHECK(out.nnz() == r.rows.size() - 1);
  std::vector<float> back(r.rows.size(), 0.0f);
  model::scatter_add(out, back.data());
  CHECK(back == r.rows);
}

TEST_CASE("dct mp: a masked push carries the gradients of the entries received, and only those") {
  const std::vector<float> rows{0.5f, 0.0f, -0.2f, 0.0f, 0.0f, 1.0f};
  const std::vector<float> grads{1.0f, 2.0f, 0.0f, 4.0f, 5.0f, -6.0f};
  model::sparse_vector out;
  model::mask_gradients(rows.data(), grads.data(), rows.size(), out);
  CHECK(out.size == 6);
  CHECK(out.index == std::vector<std::uint32_t>{0, 5}); // entry 2 was received, its gradient is 0
  CHECK(out.value == std::vector<float>{1.0f, -6.0f});
}

TEST_CASE("dct mp: per-row error feedback delivers every row's gradient sum, late but whole") {
  // In f32, and in halves: then the rounding's error waits in the residual too.
  for (bool half : {false, true}) {
    CAPTURE(half);
    const std::size_t dim = 8, tables = 3;
    std::mt19937 g(11);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::uniform_int_distribution<std::uint64_t> pick(0, 19);
    model::dct_row_thresholds th(tables, 0.05, 5, 2);
    model::dct_row_residuals res(dim);
    // Per row: every gradient computed, and every entry sent.
    std::vector<double> computed(tables * 20 * dim, 0.0), delivered(tables * 20 * dim, 0.0);
    auto at = [&](std::uint64_t key, std::size_t j) {
      return (model::key_table(key) * 20 + model::key_row(key)) * dim + j;
    };
    model::sparse_vector out;
    for (int push = 0; push < 200; ++push) {
      std::vector<std::uint64_t> keys;
      for (std::size_t t = 0; t < tables; ++t) { // distinct keys per push, as a worker's are
        const auto row = pick(g);
        keys.push_back(row_key(t, row));
        keys.push_back(row_key(t, (row + 1) % 20));
      }
      std::vector<float> grad(keys.size() * dim);
      for (std::size_t i = 0; i < grad.size(); ++i) {
        grad[i] = d(g);
        computed[at(keys[i / dim], i % dim)] += grad[i];
      }
      res.add_to(keys.data(), grad.data(), keys.size());
      th.encode(keys.data(), grad.data(), keys.size(), dim, out);
      if (half)
        model::round_to_half(out);
      res.keep_unsent(keys.data(), grad.data(), keys.size(), out);
      for (std::size_t k = 0; k < out.nnz(); ++k)
        delivered[at(keys[out.index[k] / dim], out.index[k] % dim)] += out.value[k];
    }
    CHECK(double(th.counts().values) / double(th.counts().entries) < 0.15);
    CHECK(res.rows() == tables * 20);
    // What is still held is exactly what has not been delivered yet.
    std::vector<std::uint64_t> all;
    for (std::size_t t = 0; t < tables; ++t)
      for (std::uint64_t row = 0; row < 20; ++row)
        all.push_back(row_key(t, row));
    std::vector<float> held(all.size() * dim, 0.0f);
    res.add_to(all.data(), held.data(), all.size());
    for (std::size_t i = 0; i < held.size(); ++i)
      CHECK(delivered[at(all[i / dim], i % dim)] + held[i] ==
            doctest::Approx(computed[at(all[i / dim], i % dim)]).epsilon(1e-4));
    if (half) { // what is held includes rounding errors, not only unsent entries
      std::size_t rounded = 0;
      for (float h : held)
        rounded += h != 0.0f && std::fabs(h) < 1e-3f;
      CHECK(rounded > 0);
    }
  }
}

TEST_CASE("dct mp: threshold_row_push's one lookup a row keeps what add_to and keep_unsent keep") {
  // The same pushes through threshold_row_push (add_held, keep_unsent_held)
  // and through add_to / encode / keep_unsent: the same pushes sent, bit for
  // bit, and the same residuals, with rows dropped (their floats reused by
  // later rows) and a key twice in one push.
  for (bool half : {false, true}) {
    CAPTURE(half);
    const std::size_t dim = 4, tables = 2;
    std::mt19937 g(5);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::uniform_int_distribution<std::uint64_t> pick(0, 29);
    model::dct_row_thresholds th_a(tables, 0.1, 3, 9), th_b(tables, 0.1, 3, 9);
    model::dct_row_residuals a(dim), b(dim);
    model::sparse_vector out_a, out_b;
    for (int push = 0; push < 300; ++push) {
      std::vector<std::uint64_t> keys;
      for (int i = 0; i < 6; ++i)
        keys.push_back(row_key(std::size_t(i) % tables, pick(g)));
      if (push % 7 == 0)
        keys.push_back(keys.front()); // twice in one push
      std::vector<float> grad(keys.size() * dim);
      for (auto& x : grad)
        x = d(g);
      auto grad_b = grad;
      model::threshold_row_push(th_a, &a, keys.data(), grad.data(), keys.size(), dim, half, out_a);
      b.add_to(keys.data(), grad_b.data(), keys.size());
      th_b.encode(keys.data(), grad_b.data(), keys.size(), dim, out_b);
      if (half)
        model::round_to_half(out_b);
      b.keep_unsent(keys.data(), grad_b.data(), keys.size(), out_b);
      REQUIRE(out_a.index == out_b.index);
      REQUIRE(out_a.value == out_b.value);
      if (push % 5 == 0) { // a row goes; the next new row takes its floats
        const std::uint64_t gone = row_key(0, pick(g));
        a.drop(&gone);
        b.drop(&gone);
      }
    }
    REQUIRE(a.rows() == b.rows());
    for (std::size_t t = 0; t < tables; ++t)
      for (std::uint64_t row = 0; row < 30; ++row) {
        const std::uint64_t key = row_key(t, row);
        const float* ra = a.find(&key);
        const float* rb = b.find(&key);
        REQUIRE((ra == nullptr) == (rb == nullptr));
        if (ra)
          CHECK(std::vector<float>(ra, ra + dim) == std::vector<float>(rb, rb + dim));
      }
  }
}

TEST_CASE("dct mp: a push names only the rows it carries an entry of") {
  // 4 rows of dim 3; entries in rows 1 and 3 only.
  std::vector<std::uint64_t> keys{10, 11, 12, 13};
  model::sparse_vector v;
  v.size = 12;
  v.index = {3, 5, 9, 11}; // row 1: columns 0, 2; row 3: columns 0, 2
  v.value = {1, 2, 3, 4};
  model::drop_empty_rows(keys, v, 3);
  CHECK(keys == std::vector<std::uint64_t>{11, 13});
  CHECK(v.size == 6);
  CHECK(v.index == std::vector<std::uint32_t>{0, 2, 3, 5});
  CHECK(v.value == std::vector<float>{1, 2, 3, 4});
  std::vector<float> dense(6, 0.0f);
  model::scatter_add(v, dense.data());
  CHECK(dense == std::vector<float>{1, 0, 2, 3, 0, 4});
  model::sparse_vector none; // nothing sent: no rows
  none.size = 12;
  std::vector<std::uint64_t> k2{1, 2, 3, 4};
  model::drop_empty_rows(k2, none, 3);
  CHECK(k2.empty());
  CHECK(none.size == 0);
}

TEST_CASE("dct mp: a reply sends exactly the entries at or above their table's threshold, "
          "in order, at any dim") {
  // The encoding tests a vector register of entries at a time: every dim
  // (a register, less, more, with a remainder) must give what one entry at
  // a time gives, zeros and NaNs never sent, -0 never sent.
  for (const std::size_t dim : {1u, 3u, 8u, 13u, 16u, 37u}) {
    CAPTURE(dim);
    reply r = two_tables(40, dim, 11);
    for (std::size_t i = 0; i < r.rows.size(); i += 7)
      r.rows[i] = (i / 7) % 3 == 0 ? 0.0f : (i / 7) % 3 == 1 ? -0.0f : std::nanf("");
    model::dct_row_thresholds th(2, 0.3, 1, 5);
    model::sparse_vector out;
    th.encode(r.keys.data(), r.rows.data(), r.keys.size(), dim, out);
    std::vector<std::uint32_t> index;
    std::vector<float> value;
    for (std::size_t i = 0; i < r.keys.size(); ++i) {
      const float tau = th.tau(model::key_table(r.keys[i]));
      REQUIRE(tau > 0.0f);
      for (std::size_t j = 0; j < dim; ++j) {
        const float v = r.rows[i * dim + j];
        if (v != 0.0f && std::fabs(v) >= tau) {
          index.push_back(std::uint32_t(i * dim + j));
          value.push_back(v);
        }
      }
    }
    CHECK(out.size == r.rows.size());
    CHECK(out.index == index);
    CHECK(out.value == value);
    CHECK(!index.empty());
  }
}
