#pragma once
// The coordinator's own actor under the virtual clock (sim.clock=virtual).
// The coordinator's code is blocking (request(...).receive(...), receive
// with after(...)); under the wall clock it runs as a caf::scoped_actor. On
// CAF's deterministic scheduler nothing runs unless the engine steps, so
// this blocking actor waits by stepping the engine: whenever a receive
// needs a message that is not there yet, the engine runs events until one
// arrives; a receive with a timeout waits that long in virtual time.
#include <memory>

#include <caf/blocking_actor.hpp>
#include <caf/scoped_execution_unit.hpp>

#include "sim/virtual_time.hpp"

namespace runtime {

// Owns the actor (like caf::scoped_actor); self() is valid while it lives.
class virtual_coordinator {
public:
  virtual_coordinator(caf::actor_system& sys, virtual_engine& engine);
  ~virtual_coordinator();
  virtual_coordinator(const virtual_coordinator&) = delete;
  virtual_coordinator& operator=(const virtual_coordinator&) = delete;
  caf::blocking_actor* self() const;

private:
  caf::scoped_execution_unit unit_;
  caf::strong_actor_ptr self_;
};

} // namespace runtime
