// The shadow syncer's decision (actors/syncer_policy.hpp), without CAF:
// every combination of its state for every kind of method against the
// rules, and the cases the protocol depends on.
#include <doctest/doctest.h>

#include "actors/syncer_policy.hpp"

using actors::ending;
using actors::next_step;
using actors::round_phase;
using actors::sync_family;
using actors::syncer_phase;
using actors::syncer_step;
using actors::syncer_view;

namespace {

// Method kinds: none, S-EASGD, S-ring, FR-EASGD, FR-ring.
syncer_view method(int m) {
  syncer_view v;
  v.family = m == 0 ? sync_family::none
           : (m == 1 || m == 3) ? sync_family::easgd
                                : sync_family::ring;
  v.foreground = m >= 3;
  return v;
}

// State s: phase (4) x round (3) x stop (3) x hold (3) x 5 flags (32).
constexpr unsigned states = 4 * 3 * 3 * 3 * 32;

syncer_view with_state(syncer_view v, unsigned s) {
  v.phase = syncer_phase(s % 4);
  s /= 4;
  v.round = round_phase(s % 3);
  s /= 3;
  v.stop = ending(s % 3);
  s /= 3;
  v.hold = ending(s % 3);
  s /= 3;
  v.pause_due = s & 1;
  v.workers_waiting = s & 2;
  v.has_peers = s & 4;
  v.has_min_pause = s & 8;
  v.gap_short = s & 16;
  return v;
}

} // namespace

TEST_CASE("syncer policy: every combination of state follows the rules") {
  for (int m = 0; m < 5; ++m)
    for (unsigned b = 0; b < states; ++b) {
      const auto v = with_state(method(m), b);
      const auto s = next_step(v);
      CAPTURE(m);
      CAPTURE(b);
      CAPTURE(actors::to_string(s));
      const bool stopping = v.stop != ending::none, holding = v.hold != ending::none;
      if (v.phase == syncer_phase::stopped || v.round == round_phase::in_round) {
        CHECK(s == syncer_step::wait); // one round at a time; nothing after the stop
        continue;
      }
      if (v.family == sync_family::none)
        CHECK(s != syncer_step::start_round);
      switch (s) {
        case syncer_step::finish_stop: // only when its last round is done
          CHECK(stopping);
          CHECK(!(v.ring() && v.stop == ending::rounds_left));
          break;
        case syncer_step::finish_hold:
          CHECK(holding);
          CHECK(!stopping); // a stop outranks a hold
          CHECK(!(v.ring() && v.hold == ending::rounds_left));
          break;
        case syncer_step::pause:
          CHECK(!v.foreground); // a worker waits on a foreground round: no pause
          CHECK(v.pause_due);
          CHECK(v.has_min_pause);
          CHECK(v.round != round_phase::timer); // one timer at a time
          break;
        case syncer_step::pace: // serving the ring's others after the end
          CHECK(!v.foreground);
          CHECK(v.round != round_phase::timer);
          CHECK(v.free_running());
          break;
        case syncer_step::await_batch: // shadow pacing, while training
          CHECK(!v.foreground);
          CHECK(v.round != round_phase::timer);
          CHECK(v.gap_short);
          CHECK(!v.free_running());
          CHECK(!stopping);
          CHECK(!holding);
          break;
        case syncer_step::start_round:
          CHECK(v.round != round_phase::timer);
          CHECK(actors::wants_round(v));
          if (stopping) // a stop only finishes the ring's rounds
            CHECK((v.ring() && v.stop == ending::rounds_left));
          else if (holding)
            CHECK((v.ring() && v.hold == ending::rounds_left));
          else if (v.foreground) // FR: asked for, or serving the ring's others
            CHECK((v.workers_waiting || (v.ring() && v.free_running() && v.has_peers)));
          else
            CHECK(v.started());
          break;
        case syncer_step::wait:
          // A pending stop or hold is never left unanswered once it is due.
          if (stopping)
            CHECK((v.ring() && v.stop == ending::rounds_left));
          break;
      }
    }
}

TEST_CASE("syncer policy: the cases the protocol depends on") {
  // A lone FR ring member after its trainer's end does not loop rounds.
  auto v = method(4);
  v.phase = syncer_phase::ended;
  CHECK(next_step(v) == syncer_step::wait);
  v.has_peers = true; // with peers it serves their rounds
  CHECK(next_step(v) == syncer_step::start_round);
  // S-EASGD after its trainer's end idles until the stop.
  v = method(1);
  v.phase = syncer_phase::ended;
  CHECK(next_step(v) == syncer_step::wait);
  v.stop = ending::due;
  CHECK(next_step(v) == syncer_step::finish_stop);
  // A shadow ring member waits for its replica's batch before a round on an
  // unmoved replica, but never while stopping (its peers may be waiting for it).
  v = method(2);
  v.phase = syncer_phase::running;
  v.gap_short = true;
  CHECK(next_step(v) == syncer_step::await_batch);
  v.stop = ending::rounds_left;
  CHECK(next_step(v) == syncer_step::start_round);
  // A hold with rounds left keeps rounding; at its round it is answered.
  v = method(2);
  v.phase = syncer_phase::running;
  v.hold = ending::rounds_left;
  CHECK(next_step(v) == syncer_step::start_round);
  v.hold = ending::due;
  CHECK(next_step(v) == syncer_step::finish_hold);
  // A round in flight or a timer armed: wait.
  v.hold = ending::none;
  v.round = round_phase::timer;
  CHECK(next_step(v) == syncer_step::wait);
  v.round = round_phase::in_round;
  CHECK(next_step(v) == syncer_step::wait);
}
