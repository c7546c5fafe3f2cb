// DCT on the dense sync (dct.dp) between a real shadow syncer and real dense
// shards under the deterministic scheduler (keep 1 against dense EASGD: in
// syncer_test.cpp): with a small keep and no origin the first round sends
// everything and later ones about the keep, the stats count both
// directions, and a payload that does not decode is refused naming the
// trainer.
#include <doctest/doctest.h>

#include <chrono>
#include <random>

#include "model/dct_codec.hpp"
#include "tests/actors/syncer_test_util.hpp"

using namespace syncer_test;
using namespace std::chrono_literals;


TEST_CASE_FIXTURE(test::actor_fixture, "dct: later rounds send about the keep fraction") {
  const std::size_t n = 40000;
  std::mt19937 g(1);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> w(n), c(n, 0.0f);
  for (auto& x : w)
    x = noise(g);
  const auto ranges = model::split_range(n, 2);
  model::dct_settings dct;
  dct.dp = true;
  dct.dp_keep = 0.02;
  dct.refresh = 1;
  auto shards = real_dense_shards(*this, c, ranges, dct);
  auto rep = make_replica(w);
  reaper rip{*this};
  rip.add_all(shards);
  syncer_config cfg;
  cfg.algorithm = model::sync_algorithm::fr_easgd;
  cfg.replica = rep;
  cfg.dense_shards = shards;
  cfg.dense_ranges = ranges;
  cfg.dct = dct;
  auto s = sys.spawn(actors::shadow_syncer, cfg);
  rip.add(s);
  self->send(s, start_atom::value);
  for (int r = 0; r < 10; ++r) {
    for (std::size_t i = 0; i < n; ++i) // the workers' steps between rounds
      rep->params()[i] += 0.01f * noise(g);
    REQUIRE(request<std::uint64_t>(s, sync_atom::value));
  }
  auto st = request<sync_stats>(s, stop_atom::value, std::uint64_t{0});
  REQUIRE(st);
  REQUIRE(st->rounds == 10);
  CHECK(st->dct_sent_of == 10 * n);
  // Round 1 sends all n; rounds 2..10 about 2 % each.
  const double later = double(st->dct_sent - n) / double(9 * n);
  CHECK(later > 0.015);
  CHECK(later < 0.03);
  // Bytes: round 1's bitmap (n/8 + 4n) and then about 2 % x 8 bytes per entry.
  CHECK(st->bytes_sent < std::uint64_t(4.2 * n + 9 * 0.03 * 8 * n));
  CHECK(st->dct_refreshes == 2 * 9); // per range, every thresholded round
}

TEST_CASE_FIXTURE(test::actor_fixture, "dct: a payload that does not decode is refused") {
  actors::dense_shard_config dc;
  dc.shard = 3;
  dc.offset = 10;
  dc.initial = {1, 2, 3, 4};
  dc.dct.dp = true;
  dc.num_trainers = 8; // trainer 7 is one: the payload is what is refused
  auto shard = sys.spawn(actors::dense_shard, dc);
  model::sparse_vector five;
  five.size = 5; // the shard holds 4
  messages::sparse_range req;
  req.offset = 10;
  req.trainer = 7;
  req.payload.values = model::encode(five);
  auto r = request<messages::sparse_range>(shard, exchange_atom::value, req);
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::bad_request);
  CHECK(context_of(r.error()).find("dense-shard-3: DCT exchange from trainer 7") !=
        std::string::npos);
  req.payload.values = {1, 2, 3};
  r = request<messages::sparse_range>(shard, exchange_atom::value, req);
  REQUIRE_FALSE(r);
  CHECK(context_of(r.error()).find("trainer 7") != std::string::npos);
  auto c = request<dense_range>(shard, dump_atom::value);
  REQUIRE(c);
  CHECK(c->values.values == std::vector<float>{1, 2, 3, 4}); // unchanged
}
