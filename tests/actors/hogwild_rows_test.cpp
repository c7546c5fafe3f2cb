// hogwild_rows (cluster.local-rows): a worker's direct access to a shard's
// tables reads what a lookup returns and changes the tables exactly as a
// push does; and, with real threads, two workers gathering and applying the
// same rows at once (the ThreadSanitizer build, tests/tsan.supp: only
// hogwild_rows' own accesses may race).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "actors/hogwild_rows.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;
using model::row_key;

namespace {

// The shard tests' small shard (rows 1, 4, 7 of 2 tables), with `local`.
actors::embedding_shard_config config_with(actors::rows_ptr local) {
  auto c = test::small_shard_config();
  c.local = std::move(local);
  return c;
}

actors::rows_ptr rows_of(const actors::embedding_shard_config& c) {
  return std::make_shared<actors::hogwild_rows>(c.num_shards, c.optimizer);
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "local rows: a gather is the lookup's rows; an apply is the push's change") {
  auto local = rows_of(config_with(nullptr));
  CHECK_FALSE(local->attached());
  auto direct = sys.spawn(embedding_shard, config_with(local));
  auto by_messages = sys.spawn(embedding_shard, config_with(nullptr));
  sched.run();
  REQUIRE(local->attached()); // the shard's init attached its tables

  const std::vector<std::uint64_t> keys{row_key(1, 7), row_key(0, 1), row_key(0, 4)};
  lookup_request req;
  req.batch = 3;
  req.keys.values = keys;
  auto rows = request<embedding_rows>(by_messages, lookup_atom::value, req);
  REQUIRE(rows);
  std::vector<float> gathered(keys.size() * 4);
  local->gather(keys.data(), nullptr, keys.size(), gathered.data());
  CHECK(gathered == rows->rows.values); // same seed, same rows
  // Positions (a batch's unique keys, this shard's among them): entries 2
  // and 0 land at their own rows; row 1 is left alone.
  const std::vector<std::uint32_t> at{2, 0};
  std::vector<float> placed(keys.size() * 4, -9.0f);
  local->gather(keys.data(), at.data(), at.size(), placed.data());
  CHECK(std::vector<float>(placed.begin(), placed.begin() + 4) ==
        std::vector<float>(gathered.begin(), gathered.begin() + 4));
  CHECK(std::vector<float>(placed.begin() + 4, placed.begin() + 8) == std::vector<float>(4, -9.0f));
  CHECK(std::vector<float>(placed.begin() + 8, placed.end()) ==
        std::vector<float>(gathered.begin() + 8, gathered.end()));

  std::vector<float> grads(keys.size() * 4);
  for (std::size_t i = 0; i < grads.size(); ++i)
    grads[i] = 0.05f * float(i) - 0.2f;
  local->apply(keys.data(), nullptr, keys.size(), grads.data());
  embedding_grads g;
  g.keys.values = keys;
  g.grads.values = grads;
  self->send(by_messages, push_atom::value, g);
  sched.run();
  auto a = request<float_blob>(direct, dump_atom::value);
  auto b = request<float_blob>(by_messages, dump_atom::value);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->values == b->values);
  // ... and the change is real: the gathered rows moved.
  std::vector<float> after(keys.size() * 4);
  local->gather(keys.data(), nullptr, keys.size(), after.data());
  CHECK(after != gathered);
}

TEST_CASE("hogwild rows: two worker threads gather and apply the same rows at once") {
  auto tables = std::make_shared<model::embedding_tables>(2, 4, 4, 1);
  tables->init(7, 0.5f);
  const model::sparse_optimizer opt{model::sparse_optimizer_kind::rowwise_adagrad, 0.1f, 1e-8f};
  actors::hogwild_rows local(3, opt); // shard 1 of 3: rows 1, 4, 7 (local 0-2) of each table
  local.attach(tables);
  // Both threads pull the same 6 rows towards 1.0 (gradient row - 1).
  const std::vector<std::uint64_t> keys{row_key(0, 1), row_key(0, 4), row_key(0, 7),
                                        row_key(1, 1), row_key(1, 4), row_key(1, 7)};
  const std::size_t n = keys.size(), dim = 4, steps = 300;
  std::atomic<int> ready{0};
  auto worker = [&] {
    std::vector<float> rows(n * dim), grads(n * dim);
    ready.fetch_add(1);
    while (ready.load() < 2)
      std::this_thread::yield();
    for (std::size_t s = 0; s < steps; ++s) {
      local.gather(keys.data(), nullptr, n, rows.data());
      for (std::size_t i = 0; i < rows.size(); ++i)
        grads[i] = rows[i] - 1.0f;
      local.apply(keys.data(), nullptr, n, grads.data()); // lock-free, racing the other thread
    }
  };
  std::vector<float> before(n * dim), after(n * dim);
  local.gather(keys.data(), nullptr, n, before.data());
  std::thread w0(worker), w1(worker);
  w0.join();
  w1.join();
  local.gather(keys.data(), nullptr, n, after.data());
  for (std::size_t i = 0; i < after.size(); ++i) {
    INFO("entry " << i << ": " << before[i] << " -> " << after[i]);
    CHECK(std::isfinite(after[i]));
    CHECK(std::abs(after[i] - 1.0f) < 0.5f * std::abs(before[i] - 1.0f)); // both pulled
  }
}
