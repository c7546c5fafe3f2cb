#include "actors/sim_host.hpp"
#include "actors/work.hpp"

#include <chrono>

namespace actors {

host_fabric*& current_fabric() {
  thread_local host_fabric* engine = nullptr;
  return engine;
}

void count(work kind, double items, double width, double more) {
  if (auto* e = current_fabric())
    e->count(kind, items, width, more);
}

store_timer::store_timer(caf::actor_system& sys) : sys_(&sys), t0_(sys.clock().now()) {}

std::uint64_t store_timer::ns(double bytes, double gbps) const {
  if (auto* f = fabric_of(*sys_))
    if (auto s = f->store_seconds(bytes, gbps))
      return std::uint64_t(*s * 1e9);
  return std::uint64_t(
    std::chrono::duration_cast<std::chrono::nanoseconds>(sys_->clock().now() - t0_).count());
}

void store_wait(caf::actor_system& sys, double bytes, double gbps) {
  if (auto* f = fabric_of(sys))
    f->store_seconds(bytes, gbps);
}

caf::result<caf::message> run_deferred(caf::scheduled_actor* self, caf::message_view& x) {
  auto& xs = x.content();
  if (xs.match_elements<deferred_call>() && self->current_sender() == self->ctrl()) {
    const auto call = xs.get_as<deferred_call>(0).fn;
    if (call)
      (*call)();
    return caf::message{};
  }
  return caf::print_and_drop(self, x);
}

execution execution_of(caf::actor_system& sys) {
  auto* f = fabric_of(sys);
  return f ? f->how() : execution{};
}

} // namespace actors
