// The coordinator's protocol walked step by step without CAF
// (cluster/coordinator_phases.hpp): the phases in their order, which trainers
// each one asks and awaits, the first ring, the coordinated stop's last
// round, and a trainer's loss in every phase (the ring re-formed among the
// survivors, an error during the stop, every trainer lost).
#include <doctest/doctest.h>

#include "cluster/coordinator_phases.hpp"

using runtime::coordinator_phase;
using runtime::coordinator_phases;
using idx = std::vector<std::size_t>;

namespace {

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back("trainer-" + std::to_string(i));
  return out;
}

// Every trainer in `who` replies.
void answer(coordinator_phases& p, const idx& who) {
  for (auto i : who)
    CHECK(p.reply(i));
}

// idle -> wire -> (first ring) shards -> train: every live trainer answers.
void walk_to_train(coordinator_phases& p, std::size_t n) {
  REQUIRE(p.phase() == coordinator_phase::idle);
  auto asked = p.advance();
  REQUIRE(p.phase() == coordinator_phase::wire);
  REQUIRE(asked.size() == n);
  answer(p, asked);
  REQUIRE(p.can_advance());
  CHECK(p.advance().empty());
  REQUIRE(p.phase() == coordinator_phase::shards);
  asked = p.advance();
  REQUIRE(p.phase() == coordinator_phase::train);
  REQUIRE(asked.size() == n);
}

} // namespace

TEST_CASE("coordinator phases: the whole protocol over a ring of 3, in order") {
  coordinator_phases p(names(3), /*ring=*/true, /*tolerate=*/false);
  CHECK(p.can_advance());
  CHECK(p.advance() == idx{0, 1, 2});
  CHECK(p.phase() == coordinator_phase::wire);
  // Each phase that asks waits for every trainer.
  CHECK_FALSE(p.complete());
  CHECK_FALSE(p.can_advance());
  CHECK(p.missing() == "trainer-0, trainer-1, trainer-2");
  CHECK(p.reply(1));
  CHECK_FALSE(p.reply(1)); // a second reply is not awaited
  CHECK_FALSE(p.reply(7)); // nor one from no trainer
  CHECK(p.pending() == idx{0, 2});
  CHECK(p.missing() == "trainer-0, trainer-2");
  CHECK(p.reply(0));
  CHECK(p.reply(2));
  CHECK(p.complete());
  auto ring = p.first_ring();
  REQUIRE(ring);
  CHECK(ring->generation == 0);
  CHECK(ring->members == idx{0, 1, 2});
  // shards asks no trainer: complete at once.
  CHECK(p.advance().empty());
  CHECK(p.phase() == coordinator_phase::shards);
  CHECK(p.complete());
  CHECK_FALSE(p.reply(0));
  CHECK(p.advance() == idx{0, 1, 2});
  CHECK(p.phase() == coordinator_phase::train);
  answer(p, {2, 0, 1});
  CHECK(p.advance().empty());
  CHECK(p.phase() == coordinator_phase::drain);
  CHECK_FALSE(p.stopping());
  CHECK(p.advance() == idx{0, 1, 2});
  CHECK(p.phase() == coordinator_phase::rounds);
  CHECK(p.stopping());
  // The coordinated stop: every member finishes the round after the
  // furthest one.
  answer(p, {0, 1, 2});
  CHECK(p.last_round({4, 7, 5}) == 8);
  CHECK(p.advance() == idx{0, 1, 2});
  CHECK(p.phase() == coordinator_phase::stop);
  answer(p, {0, 1, 2});
  CHECK(p.advance().empty());
  CHECK(p.phase() == coordinator_phase::report);
  CHECK(p.advance().empty());
  CHECK(p.phase() == coordinator_phase::done);
  CHECK_FALSE(p.can_advance());
  CHECK_FALSE(p.failure());
  CHECK(p.lost().empty());
}

TEST_CASE("coordinator phases: a trainer lost while training leaves the ring of 4, which re-forms") {
  coordinator_phases p(names(4), true, /*tolerate=*/true);
  walk_to_train(p, 4);
  CHECK(p.reply(3)); // trainer-3 is done before the loss
  auto ring = p.lose_trainer(1, "killed", 2.34);
  REQUIRE(ring);
  CHECK(ring->generation == 1);
  CHECK(ring->members == idx{0, 2, 3});
  CHECK(p.lost() == std::vector<std::string>{"trainer-1 lost after 2.3 s (killed)"});
  CHECK(p.survivors() == 3);
  CHECK_FALSE(p.failure());
  // The lost trainer is no longer awaited, and its late reply is dropped.
  CHECK(p.pending() == idx{0, 2});
  CHECK_FALSE(p.reply(1));
  // A second DOWN for it (its node's, after its own) changes nothing.
  CHECK_FALSE(p.lose_trainer(1, "node down", 2.5));
  CHECK(p.lost().size() == 1);
  answer(p, {0, 2});
  REQUIRE(p.can_advance());
  p.advance(); // drain
  // A second loss re-forms again, with the next generation.
  ring = p.lose_trainer(3, "killed", 3.0);
  REQUIRE(ring);
  CHECK(ring->generation == 2);
  CHECK(ring->members == idx{0, 2});
  // The coordinated stop asks only the survivors, and their rounds alone
  // decide the last one.
  CHECK(p.advance() == idx{0, 2});
  answer(p, {0, 2});
  CHECK(p.last_round({3, 40, 9, 50}) == 10); // the lost trainers' rounds do not count
  CHECK(p.advance() == idx{0, 2});
  answer(p, {0, 2});
  CHECK(p.can_advance());
  CHECK(p.alive() == std::vector<bool>{true, false, true, false});
}

TEST_CASE("coordinator phases: a trainer lost before the ring is wired is left out of it") {
  coordinator_phases p(names(3), true, true);
  CHECK(p.advance() == idx{0, 1, 2});
  CHECK(p.reply(0));
  // No ring went out yet: nothing to re-form.
  CHECK_FALSE(p.lose_trainer(2, "killed", 0.0));
  CHECK(p.lost().size() == 1);
  CHECK(p.reply(1));
  REQUIRE(p.complete());
  auto ring = p.first_ring();
  REQUIRE(ring);
  CHECK(ring->generation == 0);
  CHECK(ring->members == idx{0, 1});
  p.advance();
  // The next loss is the first re-form.
  ring = p.lose_trainer(0, "killed", 0.5);
  REQUIRE(ring);
  CHECK(ring->generation == 1);
  CHECK(ring->members == idx{1});
}

TEST_CASE("coordinator phases: EASGD and none have no ring to wire or re-form, and no last round") {
  coordinator_phases p(names(2), /*ring=*/false, true);
  p.advance();
  answer(p, {0, 1});
  CHECK_FALSE(p.first_ring());
  p.advance();
  p.advance();
  CHECK_FALSE(p.lose_trainer(0, "killed", 1.0)); // the dense shards lose a client
  CHECK(p.lost().size() == 1);
  CHECK_FALSE(p.failure());
  answer(p, {1});
  p.advance();
  CHECK(p.advance() == idx{1});
  answer(p, {1});
  CHECK(p.last_round({0, 41}) == 0);
}

TEST_CASE("coordinator phases: a loss during the coordinated stop is an error") {
  for (auto stop_phase : {coordinator_phase::rounds, coordinator_phase::stop}) {
    CAPTURE(runtime::to_string(stop_phase));
    coordinator_phases p(names(3), true, true);
    walk_to_train(p, 3);
    answer(p, {0, 1, 2});
    p.advance(); // drain
    p.advance(); // rounds
    if (stop_phase == coordinator_phase::stop) {
      answer(p, {0, 1, 2});
      p.advance();
    }
    REQUIRE(p.phase() == stop_phase);
    CHECK(p.reply(0));
    CHECK_FALSE(p.lose_trainer(2, "killed", 4.0));
    REQUIRE(p.failure());
    CHECK(*p.failure() == "trainer-2 went down during the coordinated stop (killed)");
    CHECK(p.lost().empty());
    // The run has ended: it goes no further even once the others answer.
    CHECK(p.reply(1));
    CHECK_FALSE(p.can_advance());
  }
}

TEST_CASE("coordinator phases: without tolerance any trainer's loss ends the run") {
  coordinator_phases p(names(2), true, /*tolerate=*/false);
  walk_to_train(p, 2);
  CHECK_FALSE(p.lose_trainer(0, "connection lost", 1.0));
  REQUIRE(p.failure());
  CHECK(*p.failure() == "trainer-0 is down (connection lost)");
  CHECK(p.alive() == std::vector<bool>{true, true});
  // The first failure stays.
  p.fail("a later error");
  CHECK(*p.failure() == "trainer-0 is down (connection lost)");
  CHECK_FALSE(p.can_advance());
}

TEST_CASE("coordinator phases: losing every trainer ends the run") {
  coordinator_phases p(names(2), true, true);
  walk_to_train(p, 2);
  CHECK(p.lose_trainer(0, "killed", 1.0)); // a ring of one remains
  CHECK_FALSE(p.lose_trainer(1, "killed", 2.0));
  REQUIRE(p.failure());
  CHECK(*p.failure() == "every trainer was lost");
  CHECK(p.lost().size() == 2);
  CHECK(p.survivors() == 0);
}

TEST_CASE("coordinator phases: the phases' names") {
  CHECK(std::string(runtime::to_string(coordinator_phase::wire)) == "wire");
  CHECK(std::string(runtime::to_string(coordinator_phase::drain)) == "drain");
  CHECK(runtime::asks_trainers(coordinator_phase::train));
  CHECK_FALSE(runtime::asks_trainers(coordinator_phase::shards));
  CHECK_FALSE(runtime::asks_trainers(coordinator_phase::report));
}
