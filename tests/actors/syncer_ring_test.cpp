// Shadow syncer, ring side (MA, BMUF): N syncers under the deterministic
// scheduler, compared with model/sync_rules.hpp applied by hand. Replica
// values are small integers, so the ring's sums are exact in any order.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "tests/actors/syncer_test_util.hpp"

using namespace syncer_test;
using namespace std::chrono_literals;
using model::sync_algorithm;

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma overwrite: N = 3 replicas become the average") {
  auto reps = distinct_replicas(3);
  std::vector<std::vector<float>> before;
  for (auto& r : reps)
    before.push_back(values(r));
  auto cfg = ring_config(sync_algorithm::s_ma, model::merge_mode::overwrite);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  start_all(*this, ss);
  run();
  const auto avg = average(before); // 10 + i: the mean of 10 r + i over r = 0, 1, 2
  for (auto& r : reps)
    CHECK(values(r) == avg);
  // 7 floats in chunks of 3, 2, 2. Rank 0 sends chunks 0, 2 (reduce-scatter)
  // and 1, 0 (all-gather): 10 floats; ranks 1 and 2 send 9 floats each.
  const std::uint64_t bytes[] = {40, 36, 36};
  for (std::uint32_t r = 0; r < 3; ++r) {
    CHECK(state_of(ss[r]).stats.rounds == 1);
    CHECK(state_of(ss[r]).stats.bytes_sent == bytes[r]);
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma delta: keeps a write made during the round") {
  auto reps = distinct_replicas(3);
  auto ss = spawn_ring(*this, ring_config(sync_algorithm::s_ma, model::merge_mode::delta), reps);
  reaper rip{*this};
  rip.add_all(ss);
  std::vector<std::vector<float>> snaps;
  for (auto& r : reps)
    snaps.push_back(values(r));
  start_all(*this, ss);
  // Step until every syncer has taken its snapshot (round 1 in progress).
  auto all_began = [&] {
    return std::all_of(ss.begin(), ss.end(), [](auto& s) { return state_of(s).in_round(); });
  };
  for (int i = 0; i < 10 && !all_began(); ++i)
    run_once();
  REQUIRE(all_began());
  reps[0]->params()[2] += 100.0f; // a worker's update to the live replica, mid-round
  run();
  const auto avg = average(snaps);
  for (std::uint32_t r = 0; r < 3; ++r) {
    auto got = values(reps[r]);
    for (std::size_t i = 0; i < 7; ++i) {
      const float live = snaps[r][i] + (r == 0 && i == 2 ? 100.0f : 0.0f);
      CHECK(got[i] == live + (avg[i] - snaps[r][i])); // w += target - snapshot
    }
  }
  CHECK(values(reps[0])[2] != values(reps[1])[2]); // the write survived
}

namespace {

// Two S-BMUF rounds with N = 2, checked against bmuf_step on the average.
void check_bmuf(test::actor_fixture& fx, bool nesterov) {
  auto reps = distinct_replicas(2, 5);
  auto cfg = ring_config(sync_algorithm::s_bmuf, model::merge_mode::delta);
  cfg.bmuf.eta = 0.5f; // 1 - 1/N
  cfg.bmuf.zeta = 1.0f;
  cfg.bmuf.nesterov = nesterov;
  cfg.initial = {1, 1, 1, 1, 1}; // w_g at the start (the initial model)
  auto ss = spawn_ring(fx, cfg, reps);
  reaper rip{fx};
  rip.add_all(ss);
  std::vector<float> global = cfg.initial, momentum(5, 0.0f), target = cfg.initial;
  start_all(fx, ss);
  for (int round = 1; round <= 2; ++round) {
    std::vector<std::vector<float>> snaps{values(reps[0]), values(reps[1])};
    if (round == 1)
      fx.run();
    else
      fx.advance(1s); // the pause, then round 2
    auto avg = average(snaps);
    model::bmuf_step(cfg.bmuf, global.data(), momentum.data(), target.data(), avg.data(), 5);
    for (std::uint32_t r = 0; r < 2; ++r) {
      auto got = values(reps[r]);
      for (std::size_t i = 0; i < 5; ++i)
        CHECK(got[i] == snaps[r][i] + (target[i] - snaps[r][i]));
      CHECK(state_of(ss[r]).bmuf.global == global);
      CHECK(state_of(ss[r]).bmuf.momentum == momentum);
    }
    // Training goes on between rounds: the replicas drift apart again.
    reps[0]->params()[0] += 4.0f;
    reps[1]->params()[4] -= 2.0f;
  }
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-bmuf nesterov: matches bmuf_step by hand") {
  check_bmuf(*this, true);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-bmuf classic: matches bmuf_step by hand") {
  check_bmuf(*this, false);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma N = 1: the identity, no messages") {
  auto reps = distinct_replicas(1);
  auto before = values(reps[0]);
  auto cfg = ring_config(sync_algorithm::s_ma, model::merge_mode::overwrite);
  cfg.replica = reps[0];
  auto s = sys.spawn(actors::shadow_syncer, cfg); // no peers_atom needed
  reaper rip{*this};
  rip.add(s);
  self->send(s, start_atom::value);
  run();
  CHECK(values(reps[0]) == before);
  auto st = request<sync_stats>(s, stop_atom::value, std::uint64_t{1});
  REQUIRE(st);
  CHECK(st->rounds == 1);
  CHECK(st->bytes_sent == 0);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer stop: every ring member reaches last_round") {
  auto cfg = ring_config(sync_algorithm::s_ma, model::merge_mode::delta);
  cfg.min_pause = 0ms; // back to back: run() could not return without the stop
  auto reps = distinct_replicas(3);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  start_all(*this, ss);
  for (int i = 0; i < 40; ++i) // let the ring turn for a while, unevenly
    run_once();
  // The coordinator's rule: last_round = max(rounds completed) + 1.
  std::uint64_t max_rounds = 0;
  for (auto& s : ss)
    max_rounds = std::max(max_rounds, state_of(s).stats.rounds);
  const std::uint64_t last = max_rounds + 1;
  std::vector<std::shared_ptr<test::reply_slot<sync_stats>>> stops;
  for (auto& s : ss)
    stops.push_back(request_async<sync_stats>(s, stop_atom::value, last));
  run(); // returns: every syncer stops starting rounds
  for (auto& st : stops) {
    REQUIRE(st->done());
    auto x = st->get();
    REQUIRE(x);
    CHECK(x->rounds >= last);
    CHECK(x->batches_at_round.size() == x->rounds);
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer fr-ma: the ring is a barrier; after end it "
                                       "free-runs so others' requests complete") {
  auto cfg = ring_config(sync_algorithm::fr_ma, model::merge_mode::overwrite);
  auto reps = distinct_replicas(2, 4);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  start_all(*this, ss);
  auto a = request_async<std::uint64_t>(ss[0], sync_atom::value);
  run();
  CHECK_FALSE(a->done()); // trainer 1 has not asked yet
  auto b = request_async<std::uint64_t>(ss[1], sync_atom::value);
  run();
  REQUIRE(a->done());
  CHECK(*a->get() == 1);
  CHECK(*b->get() == 1);
  CHECK(values(reps[0]) == values(reps[1]));

  self->send(ss[1], end_atom::value); // trainer 1 is done: its syncer serves the ring
  auto c = request_async<std::uint64_t>(ss[0], sync_atom::value);
  run();
  REQUIRE(c->done());
  CHECK(*c->get() == 2);
  // Stop both: trainer 0 runs the rounds up to last_round without requests.
  const std::uint64_t last =
    std::max(state_of(ss[0]).stats.rounds, state_of(ss[1]).stats.rounds) + 1;
  auto s0 = request_async<sync_stats>(ss[0], stop_atom::value, last);
  auto s1 = request_async<sync_stats>(ss[1], stop_atom::value, last);
  run();
  REQUIRE(s0->done());
  REQUIRE(s1->done());
  CHECK(s0->get()->rounds >= last);
  CHECK(s1->get()->rounds >= last);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma: a ring peer going down ends the syncer") {
  auto ss = spawn_ring(*this, ring_config(sync_algorithm::s_ma, model::merge_mode::delta),
                       distinct_replicas(2));
  reaper rip{*this};
  rip.add_all(ss);
  auto down = watch(sys, ss[0]);
  rip.add(down.watcher);
  start_all(*this, ss);
  run();
  self->send_exit(ss[1], caf::exit_reason::kill);
  run();
  REQUIRE(down.reason->has_value());
  CHECK(code_of(**down.reason) == errc::trainer_down);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma reform_on_loss: a lost member is left out "
                                       "and the survivors average among themselves") {
  auto cfg = ring_config(sync_algorithm::s_ma, model::merge_mode::overwrite);
  cfg.reform_on_loss = true;
  auto reps = distinct_replicas(3);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  auto down0 = watch(sys, ss[0]);
  rip.add(down0.watcher);
  // Trainer 2 dies before any round: survivors 0 and 1 would wait forever.
  self->send_exit(ss[2], caf::exit_reason::kill);
  run();
  start_all(*this, {ss[0], ss[1]});
  run();
  CHECK_FALSE(down0.reason->has_value()); // waiting for the re-form, not failed
  CHECK(state_of(ss[0]).stats.rounds == 0);
  // A chunk of the old ring arriving late is dropped, not a protocol error.
  ring_chunk stale;
  stale.generation = 0;
  stale.round = 1;
  stale.step = 1;
  stale.chunk = 0;
  self->send(ss[0], ring_atom::value, stale);
  // The runtime re-forms the ring: generation 1, survivors in order.
  std::vector<caf::strong_actor_ptr> survivors{caf::actor_cast<caf::strong_actor_ptr>(ss[0]),
                                               caf::actor_cast<caf::strong_actor_ptr>(ss[1])};
  std::vector<std::vector<float>> before{values(reps[0]), values(reps[1])};
  for (std::uint32_t r = 0; r < 2; ++r)
    self->send(ss[r], peers_atom::value, std::uint32_t{1}, r, survivors);
  run_once(); // the re-forms and the stale chunk
  run();
  CHECK_FALSE(down0.reason->has_value());
  const auto avg = average(before);
  CHECK(values(reps[0]) == avg);
  CHECK(values(reps[1]) == avg);
  CHECK(state_of(ss[0]).generation == 1);
  CHECK(state_of(ss[0]).ring_rounds() == 1);
  // The stop protocol counts rounds of the current generation.
  auto s0 = request_async<sync_stats>(ss[0], stop_atom::value, std::uint64_t{2});
  auto s1 = request_async<sync_stats>(ss[1], stop_atom::value, std::uint64_t{2});
  run();
  advance(1s); // the pause before round 2
  REQUIRE(s0->done());
  REQUIRE(s1->done());
  CHECK(s0->get()->rounds == 2);
  CHECK(s1->get()->rounds == 2);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer fr-ma N = 1: after end it stops without "
                                       "free-running alone") {
  auto cfg = ring_config(sync_algorithm::fr_ma, model::merge_mode::delta);
  auto reps = distinct_replicas(1);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  start_all(*this, ss);
  auto a = request_async<std::uint64_t>(ss[0], sync_atom::value);
  run();
  REQUIRE(a->done());
  CHECK(*a->get() == 1);
  self->send(ss[0], end_atom::value); // before the fix: rounds back to back, forever
  run();
  CHECK(state_of(ss[0]).stats.rounds == 1);
  auto st = request<sync_stats>(ss[0], stop_atom::value, std::uint64_t{2});
  REQUIRE(st);
  CHECK(st->rounds == 2);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma with dct.dp: the ring agrees on one picture, and no replica mass is lost") {
  // 3 members, 40 floats; the common picture starts at zero (the origin).
  std::vector<replica_ptr> reps;
  std::vector<float> total(40, 0.0f);
  for (std::uint32_t r = 0; r < 3; ++r) {
    std::vector<float> v(40);
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = float((7 * r + 3 * i) % 11) - 5.0f + 0.25f * float(r);
    for (std::size_t i = 0; i < v.size(); ++i)
      total[i] += v[i];
    reps.push_back(make_replica(v));
  }
  for (double keep : {1.0, 0.25}) {
    std::vector<replica_ptr> rs;
    for (auto& r : reps)
      rs.push_back(make_replica(values(r)));
    auto cfg = ring_config(sync_algorithm::s_ma, model::merge_mode::delta);
    cfg.dct.dp = true;
    cfg.dct.dp_keep = keep;
    cfg.dct.refresh = 1;
    cfg.dct_origin.assign(40, 0.0f);
    auto ss = spawn_ring(*this, cfg, rs);
    reaper rip{*this};
    rip.add_all(ss);
    start_all(*this, ss);
    run();
    const auto& base0 = state_of(ss[0]).dring.base;
    for (std::uint32_t r = 0; r < 3; ++r) {
      const auto& st = state_of(ss[r]);
      CHECK(st.stats.rounds == 1);
      CHECK(std::memcmp(st.dring.base.data(), base0.data(), 40 * sizeof(float)) == 0);
      CHECK(st.stats.bytes_sent > 0);
    }
    // Error feedback: each replica = the common picture + what it did not
    // send, so the replicas' sum is what it was.
    for (std::size_t i = 0; i < 40; ++i) {
      float sum = 0;
      for (auto& r : rs)
        sum += values(r)[i];
      CHECK(sum == doctest::Approx(total[i]).epsilon(1e-5));
    }
    if (keep == 1.0) // everything sent: every replica is the average
      for (auto& r : rs)
        for (std::size_t i = 0; i < 40; ++i)
          CHECK(values(r)[i] == doctest::Approx(total[i] / 3).epsilon(1e-5));
    else // a quarter sent: the replicas still differ
      CHECK(values(rs[0]) != values(rs[1]));
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma with dct.dp: after a re-form the survivors restart their picture and average exactly") {
  auto cfg = ring_config(sync_algorithm::s_ma, model::merge_mode::overwrite);
  cfg.reform_on_loss = true;
  cfg.dct.dp = true;
  cfg.dct.dp_keep = 0.25;
  cfg.dct.refresh = 1;
  cfg.dct_origin.assign(7, 0.0f);
  auto reps = distinct_replicas(3);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  const auto before = round_after_reform(*this, ss, reps);
  CHECK(before[0] != before[1]); // round 1 sent a quarter of each change
  const auto avg = average(before);
  for (std::uint32_t r = 0; r < 2; ++r)
    for (std::size_t i = 0; i < 7; ++i)
      CHECK(values(reps[r])[i] == doctest::Approx(avg[i]).epsilon(1e-6));
  CHECK(std::memcmp(state_of(ss[0]).dring.base.data(), state_of(ss[1]).dring.base.data(),
                    7 * sizeof(float)) == 0);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer fr-ma with dct.dp: a finished trainer's rounds send no change, so rounds after the end change no replica") {
  auto cfg = ring_config(sync_algorithm::fr_ma, model::merge_mode::overwrite);
  cfg.dct.dp = true;
  cfg.dct.dp_keep = 0.25;
  cfg.dct.refresh = 1;
  cfg.dct_origin.assign(8, 0.0f);
  auto reps = distinct_replicas(2, 8);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  start_all(*this, ss);
  auto a = request_async<std::uint64_t>(ss[0], sync_atom::value);
  auto b = request_async<std::uint64_t>(ss[1], sync_atom::value);
  run();
  REQUIRE(a->done());
  REQUIRE(b->done());
  CHECK(values(reps[0]) != values(reps[1])); // a quarter of each change was sent
  // Both trainers finish: their syncers serve rounds until the stop, and
  // however many run, the replicas stay as the last requested round left them.
  const auto r0 = values(reps[0]), r1 = values(reps[1]);
  self->send(ss[0], end_atom::value);
  self->send(ss[1], end_atom::value);
  const std::uint64_t last = 6;
  auto s0 = request_async<sync_stats>(ss[0], stop_atom::value, last);
  auto s1 = request_async<sync_stats>(ss[1], stop_atom::value, last);
  run();
  REQUIRE(s0->done());
  REQUIRE(s1->done());
  CHECK(s0->get()->rounds >= last);
  CHECK(values(reps[0]) == r0);
  CHECK(values(reps[1]) == r1);
}
