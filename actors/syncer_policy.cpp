#include "actors/syncer_policy.hpp"

namespace actors {

bool wants_round(const syncer_view& v) {
  if (v.family == sync_family::none)
    return false;
  if (v.stop != ending::none)
    return v.ring() && v.stop == ending::rounds_left;
  if (v.hold != ending::none)
    return v.ring() && v.hold == ending::rounds_left;
  if (v.foreground)
    return v.workers_waiting || (v.ring() && v.free_running() && v.has_peers);
  return v.started();
}

syncer_step next_step(const syncer_view& v) {
  if (v.phase == syncer_phase::stopped || v.round == round_phase::in_round)
    return syncer_step::wait;
  const bool want = wants_round(v);
  const bool stopping = v.stop != ending::none, holding = v.hold != ending::none;
  if (stopping && !want)
    return syncer_step::finish_stop;
  if (holding && !want)
    return syncer_step::finish_hold;
  if (!want || v.round == round_phase::timer)
    return syncer_step::wait;
  if (v.pause_due && !v.foreground && v.has_min_pause)
    return syncer_step::pause;
  if (v.free_running() && !stopping && !v.foreground) {
    if (v.family == sync_family::easgd)
      return syncer_step::wait;
    if (v.pause_due)
      return syncer_step::pace;
  }
  if (!v.foreground && !stopping && !holding && !v.free_running() && v.gap_short)
    return syncer_step::await_batch;
  return syncer_step::start_round;
}

const char* to_string(syncer_step s) {
  switch (s) {
    case syncer_step::finish_stop:
      return "finish_stop";
    case syncer_step::finish_hold:
      return "finish_hold";
    case syncer_step::pause:
      return "pause";
    case syncer_step::pace:
      return "pace";
    case syncer_step::await_batch:
      return "await_batch";
    case syncer_step::start_round:
      return "start_round";
    default:
      return "wait";
  }
}

} // namespace actors
