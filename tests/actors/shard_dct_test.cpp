// embedding_shard with dct.mp (model/dct_mp.hpp) under the deterministic
// scheduler: a thresholded lookup is the dense rows less what fell below its
// table's threshold; a thresholded push is applied like the dense push it
// stands for, named by keys or by place in its lookup; bad payloads are
// dropped whole; a shard without dct.mp refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "actors/held_lookups.hpp"
#include "model/dct_codec.hpp"
#include "model/dct_mp.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;
using model::row_key;

namespace {

// One shard of 2 over 3 tables of 400 rows, dim 8, SGD (w -= 0.1 g).
actors::embedding_shard_config mp_config(double keep) {
  actors::embedding_shard_config c;
  c.shard = 0;
  c.num_shards = 2;
  c.num_tables = 3;
  c.rows_per_table = 400;
  c.dim = 8;
  c.optimizer = {model::sparse_optimizer_kind::sgd, 0.1f, 1e-8f};
  c.seed = 5;
  c.dct.mp = true;
  c.dct.mp_keep = keep;
  c.dct.mp_refresh = 4;
  return c;
}

// Every even row of every table: all of shard 0's rows.
lookup_request all_rows(std::uint64_t batch) {
  lookup_request r;
  r.batch = batch;
  for (std::size_t t = 0; t < 3; ++t)
    for (std::uint64_t row = 0; row < 400; row += 2)
      r.keys.values.push_back(row_key(t, row));
  return r;
}

std::vector<float> decoded(const sparse_rows& r, std::size_t n) {
  model::sparse_vector v;
  REQUIRE_FALSE(model::decode(r.payload.data(), r.payload.size(), std::uint32_t(n), v));
  std::vector<float> out(n, 0.0f);
  model::scatter_add(v, out.data());
  return out;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "dct shard: a thresholded lookup is the rows above their table's threshold") {
  auto shard = sys.spawn(embedding_shard, mp_config(0.1));
  const auto req = all_rows(3);
  auto dense = request<embedding_rows>(shard, lookup_atom::value, req);
  auto thin = request<sparse_rows>(shard, lookup_atom::value, sparse_atom::value, req);
  REQUIRE(dense);
  REQUIRE(thin);
  CHECK(thin->batch == 3);
  CHECK(thin->refreshes == 3); // the first reply estimates each table's threshold
  const auto rows = decoded(*thin, dense->rows.size());
  // Per table (200 rows of 8 entries each, in request order): every entry
  // sent is the row's, and is larger than every entry not sent.
  std::size_t sent = 0;
  for (std::size_t t = 0; t < 3; ++t) {
    float smallest_sent = 1e9f, largest_not = 0;
    for (std::size_t i = t * 1600; i < (t + 1) * 1600; ++i) {
      if (rows[i] != 0.0f) {
        CHECK(rows[i] == dense->rows.values[i]);
        ++sent;
        smallest_sent = std::min(smallest_sent, std::fabs(rows[i]));
      } else {
        largest_not = std::max(largest_not, std::fabs(dense->rows.values[i]));
      }
    }
    CHECK(largest_not < smallest_sent);
  }
  CHECK(double(sent) / double(rows.size()) == doctest::Approx(0.1).epsilon(0.3));
  CHECK(thin->payload.size() < dense->rows.bytes() / 4);
  // The next three replies reuse the thresholds; the fifth estimates again.
  for (std::uint64_t b = 4; b < 7; ++b) {
    auto again = request<sparse_rows>(shard, lookup_atom::value, sparse_atom::value, all_rows(b));
    REQUIRE(again);
    CHECK(again->refreshes == 0);
    CHECK(again->payload == thin->payload);
  }
  auto fifth = request<sparse_rows>(shard, lookup_atom::value, sparse_atom::value, all_rows(7));
  REQUIRE(fifth);
  CHECK(fifth->refreshes == 3);
}

TEST_CASE_FIXTURE(test::actor_fixture, "dct shard: a thresholded push is applied as the dense push it stands for") {
  auto a = sys.spawn(embedding_shard, mp_config(0.1));
  auto b = sys.spawn(embedding_shard, mp_config(0.1));
  const std::vector<std::uint64_t> keys{row_key(0, 2), row_key(2, 398), row_key(1, 0)};
  std::vector<float> g(keys.size() * 8, 0.0f);
  g[1] = 1.5f;
  g[8 + 7] = -2.0f;
  g[16] = 0.25f;
  model::sparse_vector v;
  model::threshold(g.data(), g.size(), 0.0f, v);
  sparse_grads sg;
  sg.keys.values = keys;
  sg.payload.values = model::encode(v);
  embedding_grads eg;
  eg.keys.values = keys;
  eg.grads.values = g;
  self->send(a, push_atom::value, sg);
  self->send(b, push_atom::value, eg);
  run();
  auto da = request<float_blob>(a, dump_atom::value);
  auto db = request<float_blob>(b, dump_atom::value);
  auto d0 = request<float_blob>(sys.spawn(embedding_shard, mp_config(0.1)), dump_atom::value);
  REQUIRE(da);
  REQUIRE(db);
  REQUIRE(d0);
  CHECK(*da == *db);
  CHECK_FALSE(*da == *d0); // the push changed something
}

TEST_CASE_FIXTURE(test::actor_fixture, "dct shard: a payload that does not fit is dropped whole; no dct.mp, no thin lookups") {
  auto shard = sys.spawn(embedding_shard, mp_config(0.1));
  auto d0 = request<float_blob>(shard, dump_atom::value);
  model::sparse_vector v;
  v.size = 16; // two rows' worth for three keys
  v.index = {0, 9};
  v.value = {1.0f, 1.0f};
  sparse_grads bad;
  bad.keys.values = {row_key(0, 2), row_key(0, 4), row_key(0, 6)};
  bad.payload.values = model::encode(v);
  self->send(shard, push_atom::value, bad);
  sparse_grads garbage;
  garbage.keys.values = {row_key(0, 2)};
  garbage.payload.values = {7, 1, 2};
  self->send(shard, push_atom::value, garbage);
  sparse_grads foreign; // a key of shard 1
  v.size = 8;
  v.index = {0};
  v.value = {1.0f};
  foreign.keys.values = {row_key(0, 3)};
  foreign.payload.values = model::encode(v);
  self->send(shard, push_atom::value, foreign);
  run();
  auto d1 = request<float_blob>(shard, dump_atom::value);
  REQUIRE(d0);
  REQUIRE(d1);
  CHECK(*d0 == *d1);

  auto cfg = mp_config(0.1);
  cfg.dct.mp = false;
  auto plain = sys.spawn(embedding_shard, cfg);
  auto r = request<sparse_rows>(plain, lookup_atom::value, sparse_atom::value, all_rows(9));
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::bad_request);
  CHECK(context_of(r.error()).find("dct.mp is off") != std::string::npos);
}

TEST_CASE_FIXTURE(test::actor_fixture, "dct shard: a push that names its rows by place in its lookup is applied as the keyed push") {
  auto cfg = mp_config(0.1);
  cfg.dct.mp_push_places = true;
  auto placed_at = sys.spawn(embedding_shard, cfg);
  auto keyed_at = sys.spawn(embedding_shard, cfg);
  lookup_request req;
  req.batch = 4;
  req.keys.values = {row_key(0, 2), row_key(2, 398), row_key(1, 0)};
  // Rows 0 and 2 of the lookup carry entries, row 1 none.
  std::vector<float> g(3 * 8, 0.0f);
  g[1] = 1.5f;
  g[16 + 3] = -2.0f;
  g[16 + 7] = 0.25f;
  model::sparse_vector v;
  model::threshold(g.data(), g.size(), 0.0f, v);
  sparse_grads placed;
  placed.batch = 4;
  placed.rows = rows_placed;
  placed.payload.values = model::encode(v);
  sparse_grads keyed; // what the worker sends by key: the rows with an entry
  keyed.keys.values = req.keys.values;
  model::drop_empty_rows(keyed.keys.values, v, 8);
  REQUIRE(keyed.keys.values == std::vector<std::uint64_t>{row_key(0, 2), row_key(1, 0)});
  keyed.payload.values = model::encode(v);
  const auto fresh = request<float_blob>(placed_at, dump_atom::value);
  // The same sender looks up, then pushes (a request would come from another actor).
  self->send(placed_at, lookup_atom::value, sparse_atom::value, req);
  self->send(placed_at, push_atom::value, placed);
  self->send(keyed_at, push_atom::value, keyed);
  run();
  const auto after = request<float_blob>(placed_at, dump_atom::value);
  const auto want = request<float_blob>(keyed_at, dump_atom::value);
  REQUIRE(fresh);
  REQUIRE(after);
  REQUIRE(want);
  CHECK(*after == *want);
  CHECK_FALSE(*after == *fresh);
  // The lookup went with its push: the same push again is dropped, as are a
  // push of a batch never looked up, one of an unknown form, and a placed
  // push that also names keys.
  self->send(placed_at, push_atom::value, placed);
  auto never = placed;
  never.batch = 5;
  self->send(placed_at, push_atom::value, never);
  self->send(placed_at, lookup_atom::value, sparse_atom::value, req);
  auto odd = placed;
  odd.rows = 3;
  self->send(placed_at, push_atom::value, odd);
  auto both = placed;
  both.keys.values = req.keys.values;
  self->send(placed_at, push_atom::value, both);
  run();
  const auto still = request<float_blob>(placed_at, dump_atom::value);
  REQUIRE(still);
  CHECK(*still == *after);
}

TEST_CASE_FIXTURE(test::actor_fixture, "dct shard: without dct.mp-push-places no lookup is held, so a placed push is dropped") {
  auto shard = sys.spawn(embedding_shard, mp_config(0.1)); // mp_push_places false
  const auto fresh = request<float_blob>(shard, dump_atom::value);
  lookup_request req;
  req.batch = 1;
  req.keys.values = {row_key(0, 2)};
  model::sparse_vector v;
  v.size = 8;
  v.index = {3};
  v.value = {1.0f};
  sparse_grads placed;
  placed.batch = 1;
  placed.rows = rows_placed_all;
  placed.payload.values = model::encode(v);
  self->send(shard, lookup_atom::value, sparse_atom::value, req);
  self->send(shard, push_atom::value, placed);
  run();
  const auto after = request<float_blob>(shard, dump_atom::value);
  REQUIRE(fresh);
  REQUIRE(after);
  CHECK(*after == *fresh);
}

TEST_CASE("held lookups: one take per lookup, a lookup sent again replaces it, the oldest goes first") {
  actors::held_lookups h;
  std::vector<std::uint64_t> keys;
  CHECK_FALSE(h.take(0, 1, keys));
  h.hold(0, 1, {10, 11});
  h.hold(1, 1, {20});
  h.hold(0, 1, {12}); // batch 1 sent again: the newer lookup
  CHECK(h.held(0) == 1);
  REQUIRE(h.take(0, 1, keys));
  CHECK(keys == std::vector<std::uint64_t>{12});
  CHECK_FALSE(h.take(0, 1, keys)); // taken once
  REQUIRE(h.take(1, 1, keys));     // another worker's batch 1 is its own
  CHECK(keys == std::vector<std::uint64_t>{20});
  for (std::uint64_t b = 100; b < 100 + actors::held_lookups::per_worker + 1; ++b)
    h.hold(0, b, {b});
  CHECK(h.held(0) == actors::held_lookups::per_worker);
  CHECK_FALSE(h.take(0, 100, keys)); // the oldest went
  REQUIRE(h.take(0, 101, keys));
  CHECK(keys == std::vector<std::uint64_t>{101});
  REQUIRE(h.take(0, 100 + actors::held_lookups::per_worker, keys));
}

TEST_CASE("held lookups: past its senders a worker's lookups push out the stalest worker's") {
  actors::held_lookups h(2);
  std::vector<std::uint64_t> keys;
  h.hold(0, 1, {1});
  h.hold(1, 1, {2});
  h.hold(0, 2, {3}); // worker 0's newest is now newer than worker 1's
  CHECK(h.senders() == 2);
  h.hold(2, 1, {4}); // a third sender: worker 1 (newest lookup the oldest) forgets its own
  CHECK(h.senders() == 2);
  CHECK(h.held(1) == 0);
  CHECK_FALSE(h.take(1, 1, keys));
  REQUIRE(h.take(0, 1, keys));
  CHECK(keys == std::vector<std::uint64_t>{1});
  REQUIRE(h.take(0, 2, keys));
  CHECK(h.senders() == 1); // worker 0 holds nothing now
  h.hold(1, 5, {5});       // a slot is free: nobody forgets
  CHECK(h.held(2) == 1);
  CHECK(h.senders() == 2);
}
