#pragma once
// The ring messages' way into a shadow syncer (syncer_state::deliver_ring and
// replay_early, declared in shadow_syncer.hpp), shared by the MA / BMUF ring
// (shadow_syncer_ring.cpp, ring_chunk) and the DCT ring
// (shadow_syncer_dct_ring.cpp, ring_sparse). Include it only there.
#include <string>
#include <utility>
#include <vector>

#include "actors/shadow_syncer.hpp"
#include "messages/errors.hpp"
#include "messages/peer_bounds.hpp"

namespace actors {

template <class Msg, class Machine>
void syncer_state::deliver_ring(Machine* machine, std::vector<Msg>& early, std::size_t bound,
                                Msg&& m, const char* what) {
  if (m.generation < generation)
    return; // from a ring that has been re-formed since
  // Before it is kept: a generation, step, chunk or origin a ring of this
  // job can have (messages/peer_bounds.hpp); else logged and dropped.
  if (auto bad = messages::check_ring_message(m, cfg.num_trainers); !bad.empty()) {
    refuse(std::string("one of the ") + what + ": " + bad);
    return;
  }
  if (!machine || m.generation > generation) {
    if (early.size() >= bound) {
      fail(messages::errc::protocol_mismatch, "more than " + std::to_string(bound) + " " + what +
                                                " arrived before their ring was formed here");
      return;
    }
    early.push_back(std::move(m));
    return;
  }
  if (auto err = machine->receive(std::move(m)); !err.empty()) {
    fail(messages::errc::protocol_mismatch, err);
    return;
  }
  check_ring();
}

template <class Msg, class Machine>
caf::error syncer_state::replay_early(Machine& machine, std::vector<Msg>& early) {
  auto all = std::move(early);
  early.clear();
  for (auto& m : all) {
    if (m.generation > generation)
      early.push_back(std::move(m)); // a later re-form's
    else if (m.generation == generation)
      if (auto err = machine.receive(std::move(m)); !err.empty())
        return messages::make_error(messages::errc::protocol_mismatch, who() + ": " + err);
  }
  return {};
}

} // namespace actors
