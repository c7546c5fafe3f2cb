#pragma once
// Internals of hogwild_worker shared by its two source files:
// hogwild_worker.cpp (the loop) and hogwild_worker_net.cpp (the network
// model's timing of lookups and pushes). Not part of the actor's interface.
#include <cstddef>
#include <cstdint>

#include "actors/hogwild_worker.hpp"

namespace actors::worker_detail {

using self_ptr = worker_actor::stateful_pointer<worker_state>;
using clock_type = worker_state::clock_type;

// The rows of batch seq from shard s are here (checked, stored, then advance).
void on_rows(self_ptr self, std::uint64_t seq, std::size_t s, messages::embedding_rows& r);

// Network model (hogwild_worker_net.cpp); with cfg.net null they reduce to
// on_rows and a plain send.
// When the rows of a lookup of n_keys keys to shard s, sent now, count as arrived.
clock_type::time_point lookup_due(self_ptr self, std::size_t s, std::size_t n_keys);
// A lookup reply: use it now, or hold it until its simulated arrival.
void on_reply(self_ptr self, std::uint64_t seq, std::size_t s, messages::embedding_rows& r);
// The simulated arrival of held rows.
void on_tick(self_ptr self, std::uint64_t seq, std::uint64_t s);
// One push to shard s, delayed by its transfer when the network model is on.
void push_grads(self_ptr self, std::size_t s, messages::embedding_grads&& g);
// A message to every shard that must arrive after every push sent before it
// (cut marker, end): with the network model, delayed to just after the last.
template <class... Ts>
void send_after_pushes(self_ptr self, Ts... xs);

} // namespace actors::worker_detail
