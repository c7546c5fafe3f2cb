#pragma once
// Internals of trainer: its side of a checkpoint cut (the protocol is in
// trainer.hpp). Not part of the actor's interface.
#include <cstdint>

#include "actors/trainer.hpp"

namespace actors::trainer_cut_detail {

using self_ptr = trainer_actor::stateful_pointer<trainer_state>;

void on_cut(self_ptr self, std::uint64_t id, std::uint64_t last_round,
            caf::typed_response_promise<messages::cut_report> rp);
// Worker w parked for the current cut, or finished (then it has nothing to park).
void on_worker_parked(self_ptr self, std::size_t w);

} // namespace actors::trainer_cut_detail
