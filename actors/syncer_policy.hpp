#pragma once
// The shadow syncer's decision of what to do next (shadow_syncer.hpp), as a
// pure function of its state: no CAF, no clock. syncer_state::advance()
// reads its flags into a syncer_view, carries out the step and is called
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
//    min_gap_batches batches waits 1 ms and looks again (not while stopping,
//    holding or after the end, when peers may wait for this syncer).
// 7. Otherwise: start a round.
namespace actors {

struct syncer_view {
  // The method.
  bool none = false, foreground = false, easgd = false, ring = false;
  // The state.
  bool stopped = false, in_round = false, started = false, free_running = false;
  bool tick_pending = false, pause_due = false;
  bool stop_pending = false, stop_rounds_left = false; // a stop; ring rounds before its last
  bool hold_pending = false, hold_rounds_left = false; // a hold; the same
  bool workers_waiting = false;                        // FR: a worker asked for a round
  bool has_peers = false;                              // ring of more than one
  bool has_min_pause = false;                          // cfg.min_pause > 0
  bool gap_short = false; // min_gap_batches > 0 and the replica moved fewer since the last round
};

enum class syncer_step { wait, finish_stop, finish_hold, pause, pace, start_round };

// Whether a round is wanted now (rule 3's first half).
bool wants_round(const syncer_view& v);

syncer_step next_step(const syncer_view& v);

const char* to_string(syncer_step s);

} // namespace actors
