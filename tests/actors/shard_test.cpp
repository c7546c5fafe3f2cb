// embedding_shard under the deterministic scheduler: lookups against the dump,
// row-wise Adagrad pushes against model::sparse_optimizer, ownership errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;
using model::row_key;

namespace {

actors::embedding_shard_config small_config() { return test::small_shard_config(); }

lookup_request make_lookup(std::uint64_t batch, std::vector<std::uint64_t> keys) {
  lookup_request r;
  r.batch = batch;
  r.keys.values = std::move(keys);
  return r;
}

embedding_grads make_grads(std::vector<std::uint64_t> keys, std::vector<float> grads) {
  embedding_grads g;
  g.keys.values = std::move(keys);
  g.grads.values = std::move(grads);
  return g;
}

// Row `row` of table t in a dump of small_config(): local row row / 3.
std::vector<float> dumped_row(const float_blob& dump, std::size_t t, std::uint64_t row) {
  const std::size_t local_rows = 4, dim = 4;
  const float* p = dump.data() + (t * local_rows + row / 3) * dim;
  return {p, p + dim};
}

std::vector<float> slice(const float_blob& rows, std::size_t i, std::size_t dim = 4) {
  return {rows.data() + i * dim, rows.data() + (i + 1) * dim};
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "embedding shard: lookup returns the initial rows") {
  auto shard = sys.spawn(embedding_shard, small_config());
  auto dump = request<float_blob>(shard, dump_atom::value);
  REQUIRE(dump);
  REQUIRE(dump->size() == 2 * 4 * 4); // tables * local rows * dim
  // Initialised within the full table's bound sqrt(1/10) = 0.316, not the
  // local one sqrt(1/4) = 0.5; 32 draws: the largest exceeds half the bound.
  float max_abs = 0;
  for (float w : dump->values)
    max_abs = std::max(max_abs, std::abs(w));
  CHECK(max_abs <= std::sqrt(0.1f));
  CHECK(max_abs > 0.5f * std::sqrt(0.1f));

  // Duplicates and any order: rows come back in request order, batch echoed.
  auto rows = request<embedding_rows>(
    shard, lookup_atom::value,
    make_lookup(7, {row_key(1, 7), row_key(0, 1), row_key(1, 7), row_key(0, 4)}));
  REQUIRE(rows);
  CHECK(rows->batch == 7);
  REQUIRE(rows->rows.size() == 4 * 4);
  CHECK(slice(rows->rows, 0) == dumped_row(*dump, 1, 7));
  CHECK(slice(rows->rows, 1) == dumped_row(*dump, 0, 1));
  CHECK(slice(rows->rows, 2) == dumped_row(*dump, 1, 7));
  CHECK(slice(rows->rows, 3) == dumped_row(*dump, 0, 4));
  CHECK(slice(rows->rows, 0) != slice(rows->rows, 1));

  auto none = request<embedding_rows>(shard, lookup_atom::value, make_lookup(8, {}));
  REQUIRE(none);
  CHECK(none->batch == 8);
  CHECK(none->rows.size() == 0);
}

TEST_CASE_FIXTURE(test::actor_fixture, "embedding shard: push applies row-wise Adagrad") {
  auto cfg = small_config();
  auto shard = sys.spawn(embedding_shard, cfg);
  const auto k = row_key(1, 4), other = row_key(0, 7);
  auto before = request<embedding_rows>(shard, lookup_atom::value, make_lookup(0, {k, other}));
  REQUIRE(before);
  std::vector<float> w = slice(before->rows, 0);
  const std::vector<float> w0 = w;
  const std::vector<float> g1{1.0f, -2.0f, 0.5f, 0.0f}, g2{-1.0f, 1.0f, 3.0f, 2.0f};

  self->send(shard, push_atom::value, make_grads({k}, g1));
  run();
  auto after1 = request<embedding_rows>(shard, lookup_atom::value, make_lookup(1, {k, other}));
  REQUIRE(after1);
  // By hand: m = mean(g1^2) = (1 + 4 + 0.25 + 0) / 4 = 1.3125;
  // w -= 0.1 * g1 / (sqrt(1.3125) + 1e-8).
  for (std::size_t j = 0; j < 4; ++j)
    CHECK(after1->rows.values[j] == doctest::Approx(w0[j] - 0.1 * g1[j] / std::sqrt(1.3125)));
  float acc = 0;
  cfg.optimizer.apply(w.data(), &acc, g1.data(), 4);
  CHECK(acc == doctest::Approx(1.3125));
  for (std::size_t j = 0; j < 4; ++j)
    CHECK(after1->rows.values[j] == doctest::Approx(w[j]).epsilon(1e-6));
  CHECK(slice(after1->rows, 1) == slice(before->rows, 1)); // other rows untouched

  // A second push accumulates: m = 1.3125 + mean(g2^2) = 1.3125 + 15 / 4.
  self->send(shard, push_atom::value, make_grads({k}, g2));
  run();
  auto after2 = request<embedding_rows>(shard, lookup_atom::value, make_lookup(2, {k}));
  REQUIRE(after2);
  cfg.optimizer.apply(w.data(), &acc, g2.data(), 4);
  CHECK(acc == doctest::Approx(1.3125 + 3.75));
  for (std::size_t j = 0; j < 4; ++j)
    CHECK(after2->rows.values[j] == doctest::Approx(w[j]).epsilon(1e-6));
}

TEST_CASE_FIXTURE(test::actor_fixture, "embedding shard: one push updates several rows") {
  auto cfg = small_config();
  cfg.optimizer.kind = model::sparse_optimizer_kind::sgd; // w -= 0.1 g
  auto shard = sys.spawn(embedding_shard, cfg);
  auto dump0 = request<float_blob>(shard, dump_atom::value);
  self->send(shard, push_atom::value,
             make_grads({row_key(0, 1), row_key(1, 1)},
                        {1, 1, 1, 1, /* row_key(1, 1): */ 0, 0, 0, 10}));
  run();
  auto dump1 = request<float_blob>(shard, dump_atom::value);
  REQUIRE(dump0);
  REQUIRE(dump1);
  for (std::size_t i = 0; i < dump0->size(); ++i) {
    float expect = dump0->values[i];
    if (i < 4) // table 0, local row 0 = row 1
      expect -= 0.1f;
    if (i == (1 * 4 + 0) * 4 + 3) // table 1, local row 0, element 3
      expect -= 1.0f;
    CHECK(dump1->values[i] == doctest::Approx(expect));
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "embedding shard: keys of another shard are refused") {
  auto shard = sys.spawn(embedding_shard, small_config());
  // Row 3 belongs to shard 3 % 3 = 0.
  auto r = request<embedding_rows>(shard, lookup_atom::value,
                                   make_lookup(5, {row_key(0, 1), row_key(0, 3)}));
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::bad_request);
  CHECK(context_of(r.error()).find("embedding-shard-1") != std::string::npos);
  CHECK(context_of(r.error()).find("belongs to shard 0") != std::string::npos);
  // Out of range: table 2 of 2, row 10 of 10.
  for (auto key : {row_key(2, 1), row_key(0, 10)}) {
    auto e = request<embedding_rows>(shard, lookup_atom::value, make_lookup(6, {key}));
    REQUIRE_FALSE(e);
    CHECK(code_of(e.error()) == errc::bad_request);
    CHECK(context_of(e.error()).find("out of range") != std::string::npos);
  }
  // Still serving after the errors.
  CHECK(request<embedding_rows>(shard, lookup_atom::value, make_lookup(7, {row_key(1, 1)})));
}

TEST_CASE_FIXTURE(test::actor_fixture, "embedding shard: malformed pushes are dropped whole") {
  auto shard = sys.spawn(embedding_shard, small_config());
  auto dump0 = request<float_blob>(shard, dump_atom::value);
  // A good key with a key of shard 0; a size mismatch (3 floats for dim 4).
  self->send(shard, push_atom::value,
             make_grads({row_key(0, 1), row_key(0, 3)}, std::vector<float>(8, 1.0f)));
  self->send(shard, push_atom::value, make_grads({row_key(0, 1)}, {1, 1, 1}));
  run();
  auto dump1 = request<float_blob>(shard, dump_atom::value);
  REQUIRE(dump0);
  REQUIRE(dump1);
  CHECK(*dump0 == *dump1);
}

TEST_CASE_FIXTURE(test::actor_fixture, "embedding shard: shards partition every table") {
  // rows_per_table 10 over 3 shards: 4 + 3 + 3 rows; each key served by
  // exactly its owner, and different seeds give different rows.
  std::vector<actors::embedding_shard_actor> shards;
  for (std::uint32_t s = 0; s < 3; ++s) {
    auto c = small_config();
    c.shard = s;
    c.seed = 100 + s;
    shards.push_back(sys.spawn(embedding_shard, c));
  }
  for (std::size_t t = 0; t < 2; ++t)
    for (std::uint64_t row = 0; row < 10; ++row) {
      int served = 0;
      for (std::uint32_t s = 0; s < 3; ++s) {
        auto r = request<embedding_rows>(shards[s], lookup_atom::value,
                                         make_lookup(0, {row_key(t, row)}));
        if (r) {
          ++served;
          CHECK(s == row % 3);
        } else { // a refusal naming the owner, not a missing reply
          CHECK(code_of(r.error()) == errc::bad_request);
          CHECK(context_of(r.error()).find("belongs to shard " + std::to_string(row % 3)) !=
                std::string::npos);
        }
      }
      CHECK(served == 1);
    }
}

TEST_CASE_FIXTURE(test::actor_fixture, "embedding shard: a bad config quits at spawn") {
  auto c = small_config();
  c.shard = 3; // of 3
  auto shard = sys.spawn(embedding_shard, c);
  auto r = request<float_blob>(shard, dump_atom::value);
  REQUIRE_FALSE(r);
  // The actor is gone: CAF answers for it; "no reply" would mean it still runs.
  CHECK(r.error() == caf::sec::request_receiver_down);
}
