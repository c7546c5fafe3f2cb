#pragma once
// The roles' side of the virtual-time cluster (sim.clock=virtual; the
// discrete-event loop is runtime/virtual_time.hpp). Roles spawn each other
// with spawn_role() and charge their work with charge(); both do nothing
// extra under the wall clock.
//
// A role spawned by spawn_role() under a virtual clock is a sim_actor: its
// mailbox is reached only through the engine. A message sent to it from
// inside another role's handler is held until that handler's end (start +
// its cost on the sender's host) and delivered then; a message from outside
// any handler (the coordinator, a timer of the actor clock) is delivered at
// once. Which host a role runs on decides which cores it competes for.
#include <cstddef>
#include <cstdint>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/init_fun_factory.hpp>
#include <caf/infer_handle.hpp>
#include <caf/mailbox_element.hpp>

namespace actors {

// What the engine offers the roles; implemented by runtime::virtual_engine.
class virtual_engine_iface {
public:
  virtual ~virtual_engine_iface() = default;
  // A message for `receiver`: true when the engine holds it for later.
  virtual bool intercept(caf::abstract_actor* receiver, caf::mailbox_element_ptr& what) = 0;
  // `id` runs on `host` (a role spawned without a host runs on none: free).
  virtual void place(caf::actor_id id, std::size_t host) = 0;
  // Work done by the handler running now (sim.cost=model).
  virtual void charge(double flops, double bytes) = 0;
};

// The system config of a virtual-time cluster: carries its engine.
struct virtual_system_config : caf::actor_system_config {
  virtual_engine_iface* engine = nullptr;
};

inline virtual_engine_iface* engine_of(caf::actor_system& sys) {
  auto* c = dynamic_cast<const virtual_system_config*>(&sys.config());
  return c ? c->engine : nullptr;
}

// The engine whose handler runs on this thread now, or null.
virtual_engine_iface*& current_engine();

// Charges the running handler's work (no-op under the wall clock):
// flops of arithmetic and bytes of memory traffic.
inline void charge(double flops, double bytes) {
  if (auto* e = current_engine())
    e->charge(flops, bytes);
}

// A role whose every incoming message passes the engine first.
template <class Impl>
class sim_actor : public Impl {
public:
  explicit sim_actor(caf::actor_config& cfg)
      : Impl(cfg), engine_(engine_of(this->home_system())) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* eu) override {
    if (engine_ && engine_->intercept(this, what))
      return;
    Impl::enqueue(std::move(what), eu);
  }

private:
  virtual_engine_iface* engine_; // its system's, looked up once
};

// Spawns function-based role `fun(self, xs...)` on `host`: a plain actor
// under the wall clock, a sim_actor placed on `host` under a virtual clock.
template <class F, class... Ts>
caf::infer_handle_from_fun_t<F> spawn_role(caf::actor_system& sys, std::size_t host, F fun,
                                           Ts&&... xs) {
  auto* e = engine_of(sys);
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
