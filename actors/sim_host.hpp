#pragma once
// The roles' side of the simulated hosts (cluster.mode=simulated). Roles
// spawn each other with spawn_role() and charge their work with charge();
// neither knows the clock or the network.
//
// The system's host_fabric (sim/) decides what a message between two
// roles costs; a role spawned by spawn_role() in a system with a fabric is a
// sim_actor, whose mailbox is reached only through the fabric:
// - sim.clock=virtual: the fabric is the discrete-event engine
//   (sim/virtual_time.hpp). A message sent from inside a handler leaves
//   at the handler's end (start + its cost on the sender's host) and then
//   pays the network model; one from outside any handler (the coordinator,
//   a timer) arrives at once. The host decides which cores a role competes
//   for.
// - sim.clock=wall with net.enabled: the fabric is the wall-clock transport
//   (sim/wall_transport.hpp), which delays a message between hosts by
//   the network model on the actor clock.
// - sim.clock=wall without the network model: no fabric, plain actors.
#include <cstddef>
#include <cstdint>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/init_fun_factory.hpp>
#include <caf/infer_handle.hpp>
#include <caf/mailbox_element.hpp>

namespace actors {

// What the simulated hosts offer the roles; implemented in sim/ by the
// virtual engine and the wall-clock transport.
class host_fabric {
public:
  virtual ~host_fabric() = default;
  // A message for `receiver`: true when the fabric holds it for later.
  virtual bool intercept(caf::abstract_actor* receiver, caf::mailbox_element_ptr& what) = 0;
  // `id` runs on `host` (a role spawned without a host runs on none: free).
  virtual void place(caf::actor_id id, std::size_t host) = 0;
  // Work done by the handler running now (sim.cost=model).
  virtual void charge(double flops, double bytes) = 0;
  // An embedding shard's rows: `gathered` copied out for a lookup, `updated`
  // stepped by a push, of `dim` floats each (sim.cost=model).
  virtual void charge_rows(double gathered, double updated, std::size_t dim) = 0;
  // Time the handler running now spends waiting on a device other than its
  // core (the checkpoint store), in seconds.
  virtual void charge_seconds(double seconds) = 0;
  // True for the virtual clock's engine.
  virtual bool virtual_clock() const = 0;
};

// The system config of a simulated cluster: carries its fabric.
struct cluster_system_config : caf::actor_system_config {
  host_fabric* fabric = nullptr;
};

inline host_fabric* fabric_of(caf::actor_system& sys) {
  auto* c = dynamic_cast<const cluster_system_config*>(&sys.config());
  return c ? c->fabric : nullptr;
}

// True when the system runs on the virtual clock.
inline bool virtual_clock(caf::actor_system& sys) {
  auto* f = fabric_of(sys);
  return f && f->virtual_clock();
}

// The virtual engine whose handler runs on this thread now, or null.
host_fabric*& current_fabric();

// Charges the running handler's work (no-op under the wall clock):
// flops of arithmetic and bytes of memory traffic.
inline void charge(double flops, double bytes) {
  if (auto* e = current_fabric())
    e->charge(flops, bytes);
}

// Charges the running handler an embedding shard's row work (no-op under
// the wall clock): rows gathered for a lookup, rows updated by a push.
inline void charge_rows(double gathered, double updated, std::size_t dim) {
  if (auto* e = current_fabric())
    e->charge_rows(gathered, updated, dim);
}

// Charges the running handler `seconds` of device time (no-op under the
// wall clock, where the device's own time is real).
inline void charge_seconds(double seconds) {
  if (auto* e = current_fabric())
    e->charge_seconds(seconds);
}

// A role whose every incoming message passes the fabric first.
template <class Impl>
class sim_actor : public Impl {
public:
  explicit sim_actor(caf::actor_config& cfg)
      : Impl(cfg), fabric_(fabric_of(this->home_system())) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* eu) override {
    if (fabric_ && fabric_->intercept(this, what))
      return;
    Impl::enqueue(std::move(what), eu);
  }

private:
  host_fabric* fabric_; // its system's, looked up once
};

// Spawns function-based role `fun(self, xs...)` on `host`: a plain actor in
// a system without a fabric, else a sim_actor placed on `host`.
template <class F, class... Ts>
caf::infer_handle_from_fun_t<F> spawn_role(caf::actor_system& sys, std::size_t host, F fun,
                                           Ts&&... xs) {
  auto* e = fabric_of(sys);
  if (!e)
    return sys.spawn(fun, std::forward<Ts>(xs)...);
  using impl = caf::infer_impl_from_fun_t<F>;
  caf::actor_config cfg;
  caf::detail::init_fun_factory<impl, F> fac;
  cfg.init_fun = fac(std::move(fun), std::forward<Ts>(xs)...);
  auto h = sys.spawn_class<sim_actor<impl>, caf::no_spawn_options>(cfg);
  e->place(h->id(), host);
  return h;
}

} // namespace actors
