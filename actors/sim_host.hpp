#pragma once
// The roles' side of the simulated hosts (cluster.mode=simulated). Roles
// spawn each other with spawn_role() and count their work with count()
// (actors/work.hpp); neither knows the clock, the costs or the network.
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
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/init_fun_factory.hpp>
#include <caf/infer_handle.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/send.hpp>

#include "actors/work.hpp"

namespace actors {

// A role's own continuation, delivered by the fabric (at_handler_end). Not
// serialisable: it never crosses a node, and a sim_actor runs it only when
// the role sent it to itself.
struct deferred_call {
  std::shared_ptr<std::function<void()>> fn;
};

} // namespace actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actors::deferred_call)

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
  // The handler running now did `items` of `kind` (actors/work.hpp); the
  // fabric charges what that costs on its host.
  virtual void count(work kind, double items, double width, double more) = 0;
  // The modelled checkpoint store's time for `bytes` at `gbps`, charged to
  // the handler running now, in seconds; nullopt where the store is real
  // (its time is then measured).
  virtual std::optional<double> store_seconds(double bytes, double gbps) = 0;
  // How it runs handlers (actors/work.hpp).
  virtual execution how() const = 0;
};

// The system config of a simulated cluster: carries its fabric.
struct cluster_system_config : caf::actor_system_config {
  host_fabric* fabric = nullptr;
};

inline host_fabric* fabric_of(caf::actor_system& sys) {
  auto* c = dynamic_cast<const cluster_system_config*>(&sys.config());
  return c ? c->fabric : nullptr;
}

// The virtual engine whose handler runs on this thread now, or null.
host_fabric*& current_fabric();

// Runs a role's deferred_call sent to itself (at_handler_end); anything
// else unexpected is printed and dropped, as CAF does by default.
caf::result<caf::message> run_deferred(caf::scheduled_actor* self, caf::message_view& x);

// A role whose every incoming message passes the fabric first.
template <class Impl>
class sim_actor : public Impl {
public:
  explicit sim_actor(caf::actor_config& cfg)
      : Impl(cfg), fabric_(fabric_of(this->home_system())) {
    this->set_default_handler(run_deferred);
  }

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* eu) override {
    if (fabric_ && fabric_->intercept(this, what))
      return;
    Impl::enqueue(std::move(what), eu);
  }

private:
  host_fabric* fabric_; // its system's, looked up once
};

// `fn` (which may touch the role's state) takes effect at the end of the
// handler running now. Where the fabric lets a handler's effects land at
// its end (execution::writes_at_handler_end: the discrete-event engine,
// whose handler runs at its start event), fn runs in a turn of the role's
// own that the fabric delivers then, so other roles running meanwhile do
// not see its effects yet, as on real cores; elsewhere (real threads) the
// handler's own time is real and fn runs now. `self` is a role spawned by
// spawn_role().
template <class Self, class F>
void at_handler_end(Self* self, F&& fn) {
  if (!execution_of(self->system()).writes_at_handler_end) {
    fn();
    return;
  }
  const auto me = caf::actor_cast<caf::actor>(self);
  caf::send_as(me, me, deferred_call{std::make_shared<std::function<void()>>(std::forward<F>(fn))});
}

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
