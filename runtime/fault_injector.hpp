#pragma once
// Carries out faults.kill in the running simulated cluster (the entries and
// their timing: runtime/faults.hpp). The coordinator's progress poll calls
// poll(); under the virtual clock the timed kills are engine events instead,
// exact to the nanosecond.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/blocking_actor.hpp>

#include "runtime/coordinator.hpp"
#include "runtime/faults.hpp"
#include "runtime/virtual_time.hpp"

namespace runtime {

// The entries must name roles the cluster has: an error names the entry.
std::optional<std::string> check_fault_kills(const std::vector<fault_kill>& kills,
                                             const train_config& cfg);

class fault_injector {
public:
  // engine: null under the wall clock.
  fault_injector(const train_config& cfg, const cluster_handles& c, caf::blocking_actor* self,
                 virtual_engine* engine);
  // The kills due by now: `examples` trained so far.
  void poll(std::uint64_t examples);
  bool any() const { return !kills_.empty(); }
  // Training has ended: kills not carried out yet are dropped (logged).
  void disarm();

private:
  void kill(const fault_kill& k);
  std::vector<fault_kill> kills_; // not yet carried out (poll)
  std::vector<fault_kill> timed_; // engine events not yet fired
  bool armed_ = true;
  const cluster_handles& c_;
  caf::blocking_actor* self_;
  std::uint64_t total_ = 0; // the examples a fraction refers to
  caf::actor_clock::time_point start_;
};

} // namespace runtime
