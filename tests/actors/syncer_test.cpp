// Shadow syncer, EASGD side: protocol walks against mock dense shards under
// the deterministic scheduler, compared with model/sync_rules.hpp.
// alpha = 0.5 and integer-valued inputs keep every float product exact.
#include <doctest/doctest.h>

#include <chrono>

#include "actors/dense_shard.hpp"
#include "tests/actors/syncer_test_util.hpp"

using namespace syncer_test;
using namespace std::chrono_literals;
using model::sync_algorithm;

namespace {

struct easgd_setup {
  replica_ptr replica;
  std::vector<mock_shard_actor> shards;
  syncer_config cfg;
};

// Replica w0 with two dense shards (centre c0) over split_range(size, 2).
easgd_setup make_easgd(test::actor_fixture& fx, sync_algorithm alg, std::vector<float> w0,
                       std::vector<float> c0, bool hold) {
  easgd_setup s;
  s.replica = make_replica(w0);
  s.cfg.algorithm = alg;
  s.cfg.replica = s.replica;
  s.cfg.timeout = 5s;
  s.cfg.dense_ranges = model::split_range(w0.size(), 2);
  for (auto r : s.cfg.dense_ranges) {
    std::vector<float> c(c0.begin() + r.offset, c0.begin() + r.offset + r.size);
    s.shards.push_back(fx.sys.spawn(mock_shard, c, r.offset, 0.5f, hold));
    s.cfg.dense_shards.push_back(caf::actor_cast<dense_shard_actor>(s.shards.back()));
  }
  return s;
}

// One EASGD round by hand: d = 0.5 (w - c); w -= d; c += d.
void easgd_by_hand(std::vector<float>& w, std::vector<float>& c) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float d = 0.5f * (w[i] - c[i]);
    w[i] -= d;
    c[i] += d;
  }
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-easgd: rounds apply w -= alpha (w - c)") {
  std::vector<float> w{2, 4, 6, 8, 10, 12}, c{0, 1, 2, 3, 4, 5};
  auto e = make_easgd(*this, sync_algorithm::s_easgd, w, c, false);
  e.cfg.min_pause = 1s; // one round per second of fake time
  e.replica->batches = 7; // batches the workers had done by the end of round 1
  auto s = sys.spawn(actors::shadow_syncer, e.cfg);
  reaper rip{*this};
  rip.add(s);
  rip.add_all(e.shards);
  CHECK(state_of(s).phase == actors::syncer_phase::created);
  self->send(s, start_atom::value);
  run();
  easgd_by_hand(w, c);
  CHECK(values(e.replica) == w);
  // Round 1 done, the pause armed: running, between rounds on the timer.
  CHECK(state_of(s).phase == actors::syncer_phase::running);
  CHECK(state_of(s).round == actors::round_phase::timer);
  CHECK(state_of(s).pause_due);
  auto c_lo = request<dense_range>(e.shards[0], dump_atom::value);
  REQUIRE(c_lo);
  CHECK(c_lo->values.values == std::vector<float>(c.begin(), c.begin() + 3));
  CHECK(*request<std::uint64_t>(s, stats_atom::value) == 1);

  e.replica->batches = 9;
  advance(1s); // the pause ends: round 2
  easgd_by_hand(w, c);
  CHECK(values(e.replica) == w);
  CHECK(*request<std::uint64_t>(s, stats_atom::value) == 2);

  self->send(s, end_atom::value); // the trainer's end: EASGD has nothing more to run
  run();
  CHECK(state_of(s).phase == actors::syncer_phase::ended);
  auto st = request<sync_stats>(s, stop_atom::value, std::uint64_t{0});
  REQUIRE(st);
  CHECK(state_of(s).phase == actors::syncer_phase::stopped);
  CHECK(st->rounds == 2);
  CHECK(st->bytes_sent == 2 * 6 * sizeof(float)); // 2 rounds x 6 floats sent
  CHECK(st->batches_at_round == std::vector<std::uint64_t>{7, 9});
  CHECK(st->seconds >= 0.0);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer fr-easgd: requests are answered after a round "
                                       "that started later; concurrent ones coalesce") {
  std::vector<float> w{2, 4, 6, 8}, c{0, 0, 0, 0};
  auto e = make_easgd(*this, sync_algorithm::fr_easgd, w, c, true); // shards hold replies
  auto s = sys.spawn(actors::shadow_syncer, e.cfg);
  reaper rip{*this};
  rip.add(s);
  rip.add_all(e.shards);
  self->send(s, start_atom::value);
  run();
  // Without a request no round runs.
  CHECK(*request<std::uint64_t>(s, stats_atom::value) == 0);
  CHECK(state_of(s).in_round() == false);

  auto first = request_async<std::uint64_t>(s, sync_atom::value);
  run(); // round 1 starts; the shards hold their replies
  CHECK(state_of(s).in_round());
  CHECK_FALSE(first->done());
  auto second = request_async<std::uint64_t>(s, sync_atom::value);
  auto third = request_async<std::uint64_t>(s, sync_atom::value);
  run();
  CHECK_FALSE(second->done());

  for (auto& sh : e.shards)
    self->send(sh, tick_atom::value); // release round 1
  run();
  REQUIRE(first->done());
  CHECK(*first->get() == 1);
  easgd_by_hand(w, c);
  CHECK(values(e.replica) == w);
  // second and third arrived during round 1: they wait for round 2, which runs once.
  CHECK_FALSE(second->done());
  CHECK(state_of(s).in_round());
  for (auto& sh : e.shards)
    self->send(sh, tick_atom::value);
  run();
  CHECK(*second->get() == 2);
  CHECK(*third->get() == 2);
  CHECK(state_of(s).in_round() == false);
  CHECK(*request<std::uint64_t>(s, stats_atom::value) == 2);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-easgd stop: the in-flight round finishes first") {
  auto e = make_easgd(*this, sync_algorithm::s_easgd, {1, 2, 3}, {0, 0, 0}, true);
  auto s = sys.spawn(actors::shadow_syncer, e.cfg); // min_pause 0: rounds back to back
  reaper rip{*this};
  rip.add(s);
  rip.add_all(e.shards);
  self->send(s, start_atom::value);
  run();
  auto stop = request_async<sync_stats>(s, stop_atom::value, std::uint64_t{0});
  run();
  CHECK_FALSE(stop->done()); // round 1 still waits for the shards
  for (auto& sh : e.shards)
    self->send(sh, tick_atom::value);
  run();
  REQUIRE(stop->done());
  CHECK(stop->get()->rounds == 1);
  CHECK(state_of(s).in_round() == false); // and no round 2 started
  CHECK(*request<std::uint64_t>(s, sync_atom::value) == 1); // after the stop: at once
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-easgd: a dead dense shard ends the syncer") {
  auto e = make_easgd(*this, sync_algorithm::s_easgd, {1, 2, 3, 4}, {0, 0, 0, 0}, false);
  e.cfg.min_pause = 1s;
  auto s = sys.spawn(actors::shadow_syncer, e.cfg);
  reaper rip{*this};
  rip.add(s);
  rip.add_all(e.shards);
  auto down = watch(sys, s);
  rip.add(down.watcher);
  self->send(s, start_atom::value);
  run();
  REQUIRE_FALSE(down.reason->has_value());
  self->send_exit(e.shards[1], caf::exit_reason::kill);
  run();
  REQUIRE(down.reason->has_value());
  CHECK(code_of(**down.reason) == errc::shard_down);
  CHECK(context_of(**down.reason).find("dense shard 1") != std::string::npos);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-easgd: a shard that never replies times out") {
  auto e = make_easgd(*this, sync_algorithm::s_easgd, {1, 2}, {0, 0}, true); // never released
  auto s = sys.spawn(actors::shadow_syncer, e.cfg);
  reaper rip{*this};
  rip.add(s);
  rip.add_all(e.shards);
  auto down = watch(sys, s);
  rip.add(down.watcher);
  auto pending = request_async<std::uint64_t>(s, sync_atom::value);
  self->send(s, start_atom::value);
  run();
  CHECK_FALSE(down.reason->has_value());
  advance(5s); // cfg.timeout
  REQUIRE(down.reason->has_value());
  CHECK(code_of(**down.reason) == errc::request_timeout);
  // A waiting request gets the error instead of hanging.
  REQUIRE(pending->done());
  CHECK(code_of(pending->get().error()) == errc::request_timeout);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer none: no rounds; stop and sync answer at once") {
  syncer_config cfg;
  cfg.algorithm = sync_algorithm::none;
  cfg.replica = make_replica({1, 2});
  auto s = sys.spawn(actors::shadow_syncer, cfg);
  reaper rip{*this};
  rip.add(s);
  self->send(s, start_atom::value);
  run();
  CHECK(*request<std::uint64_t>(s, sync_atom::value) == 0);
  auto st = request<sync_stats>(s, stop_atom::value, std::uint64_t{5});
  REQUIRE(st);
  CHECK(st->rounds == 0);
  CHECK(st->bytes_sent == 0);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer: a config that does not fit the replica quits") {
  auto e = make_easgd(*this, sync_algorithm::s_easgd, {1, 2}, {0, 0}, false);
  e.cfg.dense_ranges[1].size = 5; // beyond the 2-float replica
  auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off); // the expected error log
  auto s = sys.spawn(actors::shadow_syncer, e.cfg);
  reaper rip{*this};
  rip.add(s);
  rip.add_all(e.shards);
  auto down = watch(sys, s);
  rip.add(down.watcher);
  run();
  spdlog::set_level(level);
  REQUIRE(down.reason->has_value());
  CHECK(code_of(**down.reason) == errc::bad_request);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-easgd: two trainers against real dense shards") {
  // The shards apply exchanges in mailbox order: trainer 0's round, then 1's.
  // Dense, and through DCT at keep 1 (dct.dp; both pictures start at the
  // centre): the same floats, since integer values keep every step exact.
  for (bool dp : {false, true}) {
    CAPTURE(dp);
    std::vector<float> w0{8, 4, 0, -4}, w1{0, 2, 4, 6}, c{1, 1, 1, 1};
    auto ranges = model::split_range(4, 2);
    model::dct_settings dct;
    dct.dp = dp;
    dct.dp_keep = 1.0;
    auto shards = real_dense_shards(*this, c, ranges, dct);
    std::vector<replica_ptr> reps{make_replica(w0), make_replica(w1)};
    reaper rip{*this};
    rip.add_all(shards);
    std::vector<syncer_actor> ss;
    for (std::uint32_t t = 0; t < 2; ++t) {
      syncer_config cfg;
      cfg.trainer = t;
      cfg.num_trainers = 2;
      cfg.min_pause = 1s; // one round: the pause's timer never fires here
      cfg.replica = reps[t];
      cfg.dense_shards = shards;
      cfg.dense_ranges = ranges;
      cfg.dct = dct;
      if (dp)
        cfg.dct_origin = c;
      ss.push_back(sys.spawn(actors::shadow_syncer, cfg));
      rip.add(ss.back());
    }
    self->send(ss[0], start_atom::value);
    self->send(ss[1], start_atom::value);
    run();
    easgd_by_hand(w0, c);
    easgd_by_hand(w1, c);
    CHECK(values(reps[0]) == w0);
    CHECK(values(reps[1]) == w1);
    auto hi = request<dense_range>(shards[1], dump_atom::value);
    REQUIRE(hi);
    CHECK(hi->values.values == std::vector<float>(c.begin() + 2, c.end()));
    auto st = request<sync_stats>(ss[0], stop_atom::value, std::uint64_t{0});
    REQUIRE(st);
    CHECK(st->rounds == 1);
    CHECK(st->bytes_received > 0);
    CHECK(st->dct_sent_of == (dp ? 4u : 0u));
    CHECK(st->dct_sent == (dp ? 4u : 0u));
    CHECK(st->dct_replied == (dp ? 4u : 0u));
  }
}
