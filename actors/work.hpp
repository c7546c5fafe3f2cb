#pragma once
// What a role tells the simulated hosts about its work: the one narrow
// interface between the roles and the fabric (sim/). A role counts what
// it did, in its own units (examples parsed, values merged, rows
// gathered, bytes written); the fabric decides what that costs on the host
// it models (sim/work_costs.hpp) and charges the handler running now. A
// role never sees a cost, a clock kind or a constant of the machine.
//
// Outside a simulation (no fabric, or the wall-clock transport) counting
// is free and the store's time is measured.
#include <cstddef>
#include <cstdint>

#include <caf/actor_clock.hpp>
#include <caf/fwd.hpp>

namespace actors {

// The time type of the roles: the actor system's clock, which is virtual
// under sim.clock=virtual and the host's steady clock otherwise.
using role_clock = caf::actor_clock;
using role_time = caf::actor_clock::time_point;

// A role's kinds of work. Each counts `items`, some of `width` floats each;
// `more` is the kind's second count where it has one.
enum class work : std::uint8_t {
  arithmetic,         // items: flops (tests, and roles without a better unit)
  parse_examples,     // items: examples parsed by a reader
  prepare_batch,      // items: ids of a batch a worker handles (keys, de-duplication,
                      // the replies' rows, the pushes' gradients)
  train_examples,     // items: examples through forward and backward, width: flops of
                      // one forward pass, more: the dense step's parameters
  sparse_encode,      // items: gradient values thresholded and encoded (DCT mp), more: the
                      // rows of the worker's residual map
  lookup_rows,        // items: embedding rows gathered, width: floats per row
  push_rows,          // items: embedding rows stepped by a push, width: floats per row
  sparse_lookup,      // items: rows thresholded and encoded for a sparse reply, width: dim
  sparse_decode,      // items: rows of a sparse push or reply decoded, width: dim
  snapshot,           // items: replica values copied at a round's start
  merge,              // items: replica values merged at a round's end
  elastic_update,     // items: values of a dense exchange's elastic update
  sparse_exchange,    // items: centre values of a DCT exchange, more: payload bytes decoded
  dense_delta,        // items: values whose change is taken, thresholded and encoded
  sparse_relay,       // items: payload bytes of a sparse ring piece decoded and passed on
  ring_reduce,        // items: values of a ring chunk reduced or copied
  ring_sum,           // items: values of a sparse ring's sum and target
  checkpoint_gather,  // items: bytes gathered into a checkpoint file
  checkpoint_load,    // items: bytes read back from checkpoint files
  cut_copy,           // items: bytes of a cut's file (read and written)
};

// The handler running now did `items` of `kind` (a no-op outside a
// simulated handler).
void count(work kind, double items, double width = 1, double more = 0);

// Times the checkpoint store: started at construction, read by ns().
class store_timer {
public:
  explicit store_timer(caf::actor_system& sys);
  // The store's time for `bytes` at `gbps`: in a simulation, the modelled
  // device time, charged to the handler running now; otherwise the time
  // since construction.
  std::uint64_t ns(double bytes, double gbps) const;

private:
  caf::actor_system* sys_;
  role_time t0_;
};

// The modelled store's time for `bytes` at `gbps` of a write already done,
// charged to the handler running now; nothing where the store is real.
void store_wait(caf::actor_system& sys, double bytes, double gbps);

// How the fabric runs handlers, for the two roles that share memory or
// threads outside messages:
// - threads_may_send: false when one thread runs every handler and no
//   other may send (the discrete-event engine): a background writer's work
//   is then done inside the handler;
// - writes_at_handler_end: true when a handler runs at its start event and
//   its effects are due at its end (start + its cost): at_handler_end
//   (actors/sim_host.hpp) then delivers them at an end event;
// - timers_wake_threads: true when each CAF timeout is an entry in a real
//   actor clock whose thread wakes for it (false: an event of the engine's
//   clock, free).
struct execution {
  bool threads_may_send = true;
  bool writes_at_handler_end = false;
  bool timers_wake_threads = true;
};
execution execution_of(caf::actor_system& sys);

} // namespace actors
