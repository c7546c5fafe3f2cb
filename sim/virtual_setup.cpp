// The virtual-time engine's setup (see virtual_time.hpp): attaching it to an
// actor system, its clock, the hosts its roles are placed on, a frozen host,
// and finding a system's engine.
#include "sim/virtual_time.hpp"

#include <algorithm>
#include <stdexcept>

#include <caf/actor_system.hpp>
#include <caf/detail/test_actor_clock.hpp>
#include <caf/scheduler/test_coordinator.hpp>

namespace runtime {

virtual_engine::virtual_engine(virtual_settings s) : cfg_(s), queues_(s.stealing) {
  cfg_.cores_per_host = std::max<std::size_t>(1, cfg_.cores_per_host);
}

void virtual_engine::attach(caf::actor_system& sys) {
  sched_ = dynamic_cast<caf::scheduler::test_coordinator*>(&sys.scheduler());
  if (!sched_)
    throw std::logic_error("virtual_engine: the actor system must run with "
                           "scheduler.policy=testing");
  start_ = now();
  machine_.assign(cfg_.machine_cores, start_);
}

virtual_engine::time_point virtual_engine::now() const {
  return sched_->clock().now();
}

virtual_engine::duration virtual_engine::elapsed() const {
  return now() - start_;
}

void virtual_engine::place(caf::actor_id id, std::size_t host) {
  actors_[id].host = host;
  if (cores_.size() <= host) {
    cores_.resize(host + 1, std::vector<time_point>(cfg_.cores_per_host, now()));
    host_busy_.resize(host + 1, 0.0);
    turn_owners_.resize(host + 1, std::vector<caf::actor_id>(cfg_.cores_per_host, 0));
  }
  queues_.add_host(host, cfg_.cores_per_host);
}

std::optional<std::size_t> virtual_engine::host_of(caf::actor_id id) const {
  if (auto i = actors_.find(id); i != actors_.end())
    return i->second.host;
  return std::nullopt;
}

void virtual_engine::freeze(std::size_t host, time_point until) {
  for (auto& c : cores_.at(host))
    c = std::max(c, until);
}

bool virtual_clock(caf::actor_system& sys) {
  return virtual_engine_of(sys) != nullptr;
}

const virtual_engine* virtual_engine_of(caf::actor_system& sys) {
  return dynamic_cast<virtual_engine*>(actors::fabric_of(sys));
}

} // namespace runtime
