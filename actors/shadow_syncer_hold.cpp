// The shadow syncer's hold for checkpoint cuts (see the hold protocol in
// shadow_syncer.hpp):
//   ring methods first: coordinator -> syncer: aim(last_round);
//                       syncer -> coordinator: the round it will hold at
//   trainer -> syncer: hold(last_round); syncer -> trainer: sync_hold
//   trainer -> syncer: resume
#include "actors/shadow_syncer.hpp"

#include <spdlog/spdlog.h>

namespace actors {

void syncer_state::on_hold(std::uint64_t last_round,
                           caf::typed_response_promise<messages::sync_hold> p) {
  hold_promises.push_back(std::move(p));
  if (stopped()) { // nothing moves any more: held as it is
    finish_hold();
    return;
  }
  hold_after = std::max(hold_after.value_or(0), last_round);
  advance();
}

std::uint64_t syncer_state::on_aim(std::uint64_t last_round) {
  if (stopped() || !ring_method())
    return last_round;
  // A round in flight must complete: its peers may have merged it already.
  const std::uint64_t at = ring_rounds() + (in_round() ? 1 : 0);
  hold_after = std::max({hold_after.value_or(0), last_round, at});
  advance(); // held now when it is there already (no reply is waiting)
  return *hold_after;
}

void syncer_state::finish_hold() {
  if (hold_promises.empty())
    return;
  messages::sync_hold h;
  h.rounds = stats.rounds;
  if (model::is_bmuf(cfg.algorithm)) {
    h.global.values = bmuf.global;
    h.momentum.values = bmuf.momentum;
  }
  for (auto& p : hold_promises)
    p.deliver(h);
  hold_promises.clear();
  spdlog::debug("{}: held after {} rounds", who(), stats.rounds);
}

void syncer_state::on_resume() {
  if (!hold_after)
    return;
  hold_after.reset();
  advance();
}

} // namespace actors
