// Shadow syncer, ring side with dct.dp-ring=reduce (MA, BMUF): N syncers
// under the deterministic scheduler reduce-scatter thresholded partial sums
// and all-gather each chunk's agreed sum (actors/sparse_ring_reduce.hpp).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "tests/actors/syncer_test_util.hpp"

using namespace syncer_test;
using namespace std::chrono_literals;
using model::sync_algorithm;

namespace {

syncer_config reduce_config(sync_algorithm alg, model::merge_mode merge, double keep,
                            std::size_t size) {
  auto cfg = ring_config(alg, merge);
  cfg.dct.dp = true;
  cfg.dct.dp_ring_reduce = true;
  cfg.dct.dp_keep = keep;
  cfg.dct.refresh = 1;
  cfg.dct_origin.assign(size, 0.0f);
  return cfg;
}

// Three S-MA members (9 floats each, keep 0.25) after their first round:
// each holds a carry, the entries its first round did not pass on.
struct ring_after_round_one {
  std::vector<replica_ptr> reps = distinct_replicas(3, 9);
  std::vector<syncer_actor> ss;
  reaper rip;
  explicit ring_after_round_one(test::actor_fixture& fx)
      : ss(spawn_ring(fx, reduce_config(sync_algorithm::s_ma, model::merge_mode::delta, 0.25, 9),
                      reps)),
        rip(fx) {
    rip.add_all(ss);
    start_all(fx, ss);
    fx.run();
    REQUIRE(state_of(ss[0]).stats.rounds == 1);
  }
};

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma with dct.dp-ring=reduce: one picture everywhere, the replicas at it, and what was kept waits beside them") {
  // 4 members, 41 floats (uneven chunks); the common picture starts at zero.
  std::vector<std::vector<float>> start;
  std::vector<float> total(41, 0.0f);
  for (std::uint32_t r = 0; r < 4; ++r) {
    std::vector<float> v(41);
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = float((7 * r + 3 * i) % 11) - 5.0f + 0.25f * float(r);
    for (std::size_t i = 0; i < v.size(); ++i)
      total[i] += v[i];
    start.push_back(v);
  }
  for (double keep : {1.0, 0.25}) {
    CAPTURE(keep);
    std::vector<replica_ptr> rs;
    for (const auto& v : start)
      rs.push_back(make_replica(v));
    auto ss = spawn_ring(*this, reduce_config(sync_algorithm::s_ma, model::merge_mode::delta,
                                              keep, 41),
                         rs);
    reaper rip{*this};
    rip.add_all(ss);
    start_all(*this, ss);
    run();
    const auto& base0 = state_of(ss[0]).dring.base;
    for (std::uint32_t r = 0; r < 4; ++r) {
      const auto& st = state_of(ss[r]);
      CHECK(st.stats.rounds == 1);
      CHECK(std::memcmp(st.dring.base.data(), base0.data(), 41 * sizeof(float)) == 0);
      CHECK(st.stats.bytes_sent > 0);
      CHECK(values(rs[r]) == base0); // nothing trained since: each replica is the picture
    }
    // Error feedback: the picture times N plus what the members kept is
    // the replicas' sum before the round.
    for (std::size_t i = 0; i < 41; ++i) {
      float kept = 0;
      for (std::uint32_t r = 0; r < 4; ++r)
        kept += state_of(ss[r]).dring.carry[i];
      CHECK(4 * base0[i] + kept == doctest::Approx(total[i]).epsilon(1e-5));
    }
    bool any_kept = false;
    for (std::uint32_t r = 0; r < 4; ++r)
      for (float c : state_of(ss[r]).dring.carry)
        any_kept |= c != 0.0f;
    if (keep == 1.0) { // everything sent: the picture is the average
      CHECK_FALSE(any_kept);
      for (std::size_t i = 0; i < 41; ++i)
        CHECK(base0[i] == doctest::Approx(total[i] / 4).epsilon(1e-5));
    } else {
      CHECK(any_kept);
    }
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma with dct.dp-ring=reduce: the stop leaves what was kept out of the replicas") {
  // The carry is error feedback's residual: changes made against pictures
  // the ring has left. Put into the replicas at the stop, it made the final
  // average worse (docs/dct.md), so the replicas stay at the picture.
  ring_after_round_one ring(*this);
  auto& reps = ring.reps;
  auto& ss = ring.ss;
  const auto picture = state_of(ss[0]).dring.base;
  std::vector<std::shared_ptr<test::reply_slot<sync_stats>>> stops;
  for (auto& s : ss)
    stops.push_back(request_async<sync_stats>(s, stop_atom::value, std::uint64_t{1}));
  run();
  for (auto& st : stops)
    REQUIRE(st->done());
  for (const auto& r : reps)
    CHECK(values(r) == picture);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma with dct.dp-ring=reduce: after a re-form the survivors restart their picture and average exactly") {
  auto cfg = reduce_config(sync_algorithm::s_ma, model::merge_mode::overwrite, 0.25, 7);
  cfg.reform_on_loss = true;
  auto reps = distinct_replicas(3);
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  // Round 1 passes a quarter of each partial sum on; the carries it leaves
  // are dropped with the picture at the re-form.
  const auto avg = average(round_after_reform(*this, ss, reps));
  for (std::uint32_t r = 0; r < 2; ++r) {
    for (std::size_t i = 0; i < 7; ++i)
      CHECK(values(reps[r])[i] == doctest::Approx(avg[i]).epsilon(1e-6));
    for (float c : state_of(ss[r]).dring.carry)
      CHECK(c == 0.0f);
  }
}

namespace {

// FR-MA with the reduce at keep 0.25: one requested round, every trainer
// finishes, and the syncers stop after round `last`. The replicas then.
std::vector<std::vector<float>> finished_ring(test::actor_fixture& fx, std::uint64_t last,
                                              std::vector<float>& total) {
  auto cfg = reduce_config(sync_algorithm::fr_ma, model::merge_mode::overwrite, 0.25, 8);
  auto reps = distinct_replicas(3, 8);
  total.assign(8, 0.0f);
  for (const auto& r : reps)
    for (std::size_t i = 0; i < 8; ++i)
      total[i] += values(r)[i];
  auto ss = spawn_ring(fx, cfg, reps);
  reaper rip{fx};
  rip.add_all(ss);
  start_all(fx, ss);
  std::vector<std::shared_ptr<test::reply_slot<std::uint64_t>>> asks;
  for (auto& s : ss)
    asks.push_back(fx.request_async<std::uint64_t>(s, sync_atom::value));
  fx.run();
  for (auto& a : asks)
    REQUIRE(a->done());
  for (auto& s : ss)
    fx.self->send(s, end_atom::value);
  std::vector<std::shared_ptr<test::reply_slot<sync_stats>>> stops;
  for (auto& s : ss)
    stops.push_back(fx.request_async<sync_stats>(s, stop_atom::value, last));
  fx.run();
  for (auto& st : stops) {
    REQUIRE(st->done());
    CHECK(st->get()->rounds >= last);
  }
  std::vector<std::vector<float>> out;
  for (const auto& r : reps)
    out.push_back(values(r));
  return out;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "syncer fr-ma with dct.dp-ring=reduce: once every trainer has finished, rounds change no replica") {
  // In the first round after the end every member drops its carry and
  // passes on all it receives: nothing moves, and nothing is kept. A stop
  // after round 2 or after round 6 ends with the same replicas, to the bit.
  std::vector<float> total;
  const auto two = finished_ring(*this, 2, total);
  const auto six = finished_ring(*this, 6, total);
  CHECK(two == six);
  CHECK(six[0] == six[1]); // each at the picture of round 1 (no trainer moved since)
  CHECK(six[1] == six[2]);
}

TEST_CASE_FIXTURE(test::actor_fixture, "syncer s-ma with dct.dp-ring=reduce: a finished trainer passes the others' partial sums on and keeps none") {
  std::vector<float> total(9, 0.0f); // of the replicas the ring starts from
  for (const auto& r : distinct_replicas(3, 9))
    for (std::size_t i = 0; i < 9; ++i)
      total[i] += values(r)[i];
  ring_after_round_one ring(*this);
  auto& reps = ring.reps;
  auto& ss = ring.ss;
  const auto dropped = state_of(ss[0]).dring.carry; // what trainer 0 kept in round 1
  self->send(ss[0], end_atom::value); // trainer 0 has finished; 1 and 2 go on
  run();
  advance(1s); // round 2
  run();
  REQUIRE(state_of(ss[0]).stats.rounds == 2);
  const auto& base = state_of(ss[0]).dring.base;
  for (float c : state_of(ss[0]).dring.carry)
    CHECK(c == 0.0f);
  CHECK(values(reps[0]) == base); // its own change was zero, and it took nothing in
  float others = 0;
  for (std::uint32_t r = 1; r < 3; ++r)
    for (float c : state_of(ss[r]).dring.carry)
      others += std::fabs(c);
  CHECK(others > 0.0f); // the live members still keep what they did not pass on
  // Nothing else is lost: the picture and the live members' carries hold
  // every change but what trainer 0 dropped when it finished.
  for (std::size_t i = 0; i < 9; ++i) {
    float sum = 3 * base[i] + dropped[i];
    for (std::uint32_t r = 0; r < 3; ++r)
      sum += state_of(ss[r]).dring.carry[i];
    CHECK(sum == doctest::Approx(total[i]).epsilon(1e-5));
  }
}
