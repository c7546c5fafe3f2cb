// The shadow syncer's decision (actors/syncer_policy.hpp), without CAF:
// every combination of its flags for every kind of method against the
// rules, and the cases the protocol depends on.
#include <doctest/doctest.h>

#include "actors/syncer_policy.hpp"

using actors::next_step;
using actors::syncer_step;
using actors::syncer_view;

namespace {

// Method kinds: none, S-EASGD, S-ring, FR-EASGD, FR-ring.
syncer_view method(int m) {
  syncer_view v;
  v.none = m == 0;
  v.easgd = m == 1 || m == 3;
  v.ring = m == 2 || m == 4;
  v.foreground = m >= 3;
  return v;
}

syncer_view with_bits(syncer_view v, unsigned b) {
  v.stopped = b & 1;
  v.in_round = b & 2;
  v.started = b & 4;
  v.free_running = b & 8;
  v.tick_pending = b & 16;
  v.pause_due = b & 32;
  v.stop_pending = b & 64;
  v.stop_rounds_left = (b & 128) && v.stop_pending;
  v.hold_pending = b & 256;
  v.hold_rounds_left = (b & 512) && v.hold_pending;
  v.workers_waiting = b & 1024;
  v.has_peers = b & 2048;
  v.has_min_pause = b & 4096;
  v.gap_short = b & 8192;
  return v;
}

} // namespace

TEST_CASE("syncer policy: every combination of flags follows the rules") {
  for (int m = 0; m < 5; ++m)
    for (unsigned b = 0; b < (1u << 14); ++b) {
      const auto v = with_bits(method(m), b);
      const auto s = next_step(v);
      CAPTURE(m);
      CAPTURE(b);
      CAPTURE(actors::to_string(s));
      if (v.stopped || v.in_round) {
        CHECK(s == syncer_step::wait); // one round at a time; nothing after the stop
        continue;
      }
      if (v.none)
        CHECK(s != syncer_step::start_round);
      switch (s) {
        case syncer_step::finish_stop: // only when its last round is done
          CHECK(v.stop_pending);
          CHECK(!(v.ring && v.stop_rounds_left));
          break;
        case syncer_step::finish_hold:
          CHECK(v.hold_pending);
          CHECK(!v.stop_pending); // a stop outranks a hold
          CHECK(!(v.ring && v.hold_rounds_left));
          break;
        case syncer_step::pause:
          CHECK(!v.foreground); // a worker waits on a foreground round: no pause
          CHECK(v.pause_due);
          CHECK(v.has_min_pause);
          CHECK(!v.tick_pending); // one timer at a time
          break;
        case syncer_step::pace:
          CHECK(!v.foreground);
          CHECK(!v.tick_pending);
          break;
        case syncer_step::start_round:
          CHECK(!v.tick_pending);
          CHECK(actors::wants_round(v));
          if (v.stop_pending) // a stop only finishes the ring's rounds
            CHECK((v.ring && v.stop_rounds_left));
          else if (v.hold_pending)
            CHECK((v.ring && v.hold_rounds_left));
          else if (v.foreground) // FR: asked for, or serving the ring's others
            CHECK((v.workers_waiting || (v.ring && v.free_running && v.has_peers)));
          else
            CHECK(v.started);
          break;
        case syncer_step::wait:
          // A pending stop or hold is never left unanswered once it is due.
          if (v.stop_pending)
            CHECK((v.ring && v.stop_rounds_left));
          break;
      }
    }
}

TEST_CASE("syncer policy: the cases the protocol depends on") {
  // A lone FR ring member after its trainer's end does not loop rounds.
  auto v = method(4);
  v.started = v.free_running = true;
  CHECK(next_step(v) == syncer_step::wait);
  v.has_peers = true; // with peers it serves their rounds
  CHECK(next_step(v) == syncer_step::start_round);
  // S-EASGD after its trainer's end idles until the stop.
  v = method(1);
  v.started = v.free_running = true;
  CHECK(next_step(v) == syncer_step::wait);
  v.stop_pending = true;
  CHECK(next_step(v) == syncer_step::finish_stop);
  // A shadow ring member paces before a round on an unmoved replica, but
  // never while stopping (its peers may be waiting for it).
  v = method(2);
  v.started = v.gap_short = true;
  CHECK(next_step(v) == syncer_step::pace);
  v.stop_pending = v.stop_rounds_left = true;
  CHECK(next_step(v) == syncer_step::start_round);
  // A hold with rounds left keeps rounding; at its round it is answered.
  v = method(2);
  v.started = v.hold_pending = v.hold_rounds_left = true;
  CHECK(next_step(v) == syncer_step::start_round);
  v.hold_rounds_left = false;
  CHECK(next_step(v) == syncer_step::finish_hold);
}
