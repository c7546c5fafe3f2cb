#pragma once
// The shadow syncer's decision of what to do next (shadow_syncer.hpp), as a
// pure function of its state: no CAF, no clock. syncer_state::advance()
// reads its state into a syncer_view, carries out the step and is called
// again by the next event. The rules (tests/actors/syncer_policy_test.cpp):
//
// 1. Stopped, or a round in flight: wait.
// 2. A pending stop (or hold) whose last round is done: reply to it. A stop
//    or hold keeps ring methods rounding up to its last round; EASGD and
//    `none` have none to run then.
// 3. No round wanted, or a timer already armed: wait. A round is wanted by
//    shadow methods once started; by foreground methods when a worker asked
//    for one, or, after this trainer's end, to serve the other ring members
//    (not alone: a ring of one would loop forever).
// 4. Shadow methods after a round: the optional pause (min_pause) first.
// 5. After this trainer's end, shadow methods: EASGD has nothing left to do;
//    a ring member serves its peers' rounds, paced by 1 ms.
// 6. Shadow pacing: a round on a replica that moved fewer than
//    min_gap_batches batches waits for the worker whose batch completes the
//    gap to wake it (not while stopping, holding or after the end, when peers
//    may wait for this syncer).
// 7. Otherwise: start a round.
#include <cstdint>

namespace actors {

// The syncer's life: created -(start)-> running -(its trainer's end)->
// ended (a ring member then serves the others' rounds) -(the stop reply,
// or a failure)-> stopped. An end before the start counts as both.
enum class syncer_phase : std::uint8_t { created, running, ended, stopped };
// Between rounds and in one: idle -(start_round)-> in_round -(finish, or
// abandoned)-> idle; idle -(pause or pace armed)-> timer -(tick)-> idle;
// idle -(await_batch)-> timer -(the worker's wake, or any event)-> idle.
enum class round_phase : std::uint8_t { idle, in_round, timer };
// The method's family of rounds.
enum class sync_family : std::uint8_t { none, easgd, ring };
// A stop or a hold: none asked; asked, with ring rounds to run before its
// last; asked, and its last round is done (or the method has none to run).
enum class ending : std::uint8_t { none, rounds_left, due };

struct syncer_view {
  // The method.
  sync_family family = sync_family::none;
  bool foreground = false;
  // The state.
  syncer_phase phase = syncer_phase::created;
  round_phase round = round_phase::idle;
  ending stop = ending::none, hold = ending::none;
  bool pause_due = false;       // a round completed; shadow: wait min_pause first
  bool workers_waiting = false; // FR: a worker asked for a round
  bool has_peers = false;       // ring of more than one
  bool has_min_pause = false;   // cfg.min_pause > 0
  bool gap_short = false; // min_gap_batches > 0 and the replica moved fewer since the last round

  bool ring() const { return family == sync_family::ring; }
  bool started() const { return phase == syncer_phase::running || phase == syncer_phase::ended; }
  bool free_running() const { return phase == syncer_phase::ended; } // FR ring: serve the others
};

enum class syncer_step { wait, finish_stop, finish_hold, pause, pace, await_batch, start_round };

// Whether a round is wanted now (rule 3's first half).
bool wants_round(const syncer_view& v);

syncer_step next_step(const syncer_view& v);

const char* to_string(syncer_step s);

} // namespace actors
