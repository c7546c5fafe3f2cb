// The test fixture itself: requests, errors, fire-and-forget sends and the
// fake clock, on a trivial typed actor.
#include <doctest/doctest.h>

#include <chrono>

#include <caf/typed_event_based_actor.hpp>

#include "tests/actors/test_fixture.hpp"

namespace {

using add_atom = caf::atom_constant<caf::atom("add")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using messages::tick_atom;

using counter_actor = caf::typed_actor<
  caf::replies_to<get_atom, int>::with<int>, // counter + x; x < 0 -> bad_request
  caf::reacts_to<add_atom, int>,             // counter += x; x == 0 -> tick in 1 s
  caf::reacts_to<tick_atom>>;                // counter += 100

struct counter_state {
  static inline const char* name = "counter";
  int n = 0;
};

// `start`: the initial count. (An actor function with no argument makes CAF
// 0.17 bind a null tuple: UBSan, see test_fixture.hpp.)
counter_actor::behavior_type counter(counter_actor::stateful_pointer<counter_state> self,
                                     int start) {
  self->state.n = start;
  return {
    [=](get_atom, int x) -> caf::result<int> {
      if (x < 0)
        return messages::make_error(messages::errc::bad_request, "negative");
      return self->state.n + x;
    },
    [=](add_atom, int x) {
      self->state.n += x;
      if (x == 0)
        self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
    },
    [=](tick_atom) { self->state.n += 100; },
  };
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "fixture: request returns the reply") {
  auto c = sys.spawn(counter, 0);
  auto r = request<int>(c, get_atom::value, 5);
  REQUIRE(r);
  CHECK(*r == 5);
}

TEST_CASE_FIXTURE(test::actor_fixture, "fixture: request returns the replied error") {
  auto c = sys.spawn(counter, 0);
  auto r = request<int>(c, get_atom::value, -1);
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == messages::errc::bad_request);
  CHECK(context_of(r.error()) == "negative");
}

TEST_CASE_FIXTURE(test::actor_fixture, "fixture: sends from self are delivered by run") {
  auto c = sys.spawn(counter, 0);
  self->send(c, add_atom::value, 3);
  self->send(c, add_atom::value, 4);
  CHECK(run() >= 2);
  CHECK(*request<int>(c, get_atom::value, 0) == 7);
}

TEST_CASE_FIXTURE(test::actor_fixture, "fixture: request_async waits for the test to step") {
  auto c = sys.spawn(counter, 0);
  run(); // let the spawn settle
  auto slot = request_async<int>(c, get_atom::value, 1);
  CHECK_FALSE(slot->done());
  run();
  REQUIRE(slot->done());
  CHECK(*slot->get() == 1);
}

TEST_CASE_FIXTURE(test::actor_fixture, "fixture: timers fire only when the clock advances") {
  auto c = sys.spawn(counter, 0);
  self->send(c, add_atom::value, 0); // arms the 1 s tick
  run();
  CHECK(*request<int>(c, get_atom::value, 0) == 0);
  advance(std::chrono::milliseconds(999));
  CHECK(*request<int>(c, get_atom::value, 0) == 0);
  advance(std::chrono::milliseconds(1));
  CHECK(*request<int>(c, get_atom::value, 0) == 100);
}

TEST_CASE_FIXTURE(test::actor_fixture, "fixture: no reply reads as request_timeout") {
  auto c = sys.spawn(counter, 0);
  self->send(c, add_atom::value, 0); // a pending timer keeps nothing running
  auto slot = request_async<int>(c, get_atom::value, 1);
  CHECK_FALSE(slot->get());
  CHECK(code_of(slot->get().error()) == messages::errc::request_timeout);
  advance(std::chrono::seconds(1));
}

TEST_CASE_FIXTURE(test::actor_fixture, "fixture: collector actors terminate after the reply") {
  auto c = sys.spawn(counter, 0);
  run();
  const auto baseline = sys.registry().running();
  CHECK(*request<int>(c, get_atom::value, 1) == 1);
  CHECK_FALSE(request<int>(c, get_atom::value, -1));
  CHECK(sys.registry().running() == baseline);
}
