#pragma once
// Internals of trainer: spawning its children (trainer_children.cpp). Not
// part of the actor's interface.
#include "actors/trainer.hpp"

namespace actors::trainer_children_detail {

using self_ptr = trainer_actor::stateful_pointer<trainer_state>;

// Spawns the reader, the syncer and cfg.workers workers into self->state
// (the replica and the live progress must exist), monitors them and the
// embedding shards, and attaches their exit to the trainer's own.
void spawn_children(self_ptr self);

} // namespace actors::trainer_children_detail
