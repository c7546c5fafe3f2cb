#pragma once
// Carries out faults.kill, faults.freeze and faults.slow-nic in the running
// simulated cluster (the entries and their timing: config/faults.hpp). The
// coordinator's progress poll calls poll(); under the virtual clock the
// timed faults are engine events instead, exact to the nanosecond.
//
// How each is done:
//   kill      an exit message (kill) to the role;
//   freeze    virtual clock: the host's cores are busy until the end
//             (virtual_engine::freeze); wall clock: the transport holds the
//             host's messages until a poll finds the freeze over (and at the
//             latest when training ends);
//   slow-nic  a window of the network model (network_model::slow).
// faults.mtbf draws embedding shard kills: exponential gaps with that mean,
// a shard drawn uniformly, from model.seed (so a run replays), each drawn
// after the one before is carried out.
// What was done, and when, is kept for the metrics (done()).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/blocking_actor.hpp>

#include "data/synthetic_random.hpp"
#include "cluster/coordinator.hpp"
#include "config/faults.hpp"
#include "sim/network_model.hpp"
#include "sim/virtual_time.hpp"
#include "sim/wall_transport.hpp"

namespace runtime {

// The entries must name roles the cluster has, and a slow NIC needs the
// network model: an error names the entry.
std::optional<std::string> check_faults(const std::vector<fault_event>& faults,
                                        const train_config& cfg);

// What the injector acts through; each may be null where the run has none.
struct fault_targets {
  virtual_engine* engine = nullptr;     // the virtual clock
  wall_transport* transport = nullptr;  // the wall clock's transport (freezes)
  network_model* network = nullptr;     // slow NICs
};

class fault_injector {
public:
  fault_injector(const train_config& cfg, const cluster_handles& c, caf::blocking_actor* self,
                 fault_targets targets);
  // Training begins: a time in faults.kill (and a faults.mtbf draw) counts
  // from t0, the zero of the recovery's events and of the progress line.
  // Under the virtual clock the timed faults become engine events here.
  // Only the first call counts (a rollback's attempt keeps the zero).
  void start(caf::actor_clock::time_point t0);
  // The faults due by now: `examples` trained so far. Ends due wall freezes.
  void poll(std::uint64_t examples);
  bool any() const { return !pending_.empty() || !timed_.empty(); }
  // Training has ended: faults not carried out yet are dropped (logged), and
  // frozen hosts thaw.
  void disarm();
  // While held, kills fall due but wait; release carries them out (a cut in
  // progress under recovery.mode=full: cluster/full_recovery.hpp).
  void hold() { held_ = true; }
  void release();
  // "killed trainer-1 at 1.234 s", ... in the order they happened.
  const std::vector<std::string>& done() const { return done_; }
  // The kills carried out so far, and the roles they went to, in order.
  std::size_t kills() const { return killed_.size(); }
  const std::vector<caf::actor_addr>& killed() const { return killed_; }

private:
  void inject(const fault_event& k);
  // faults.mtbf: the next drawn shard failure, after `after` seconds.
  fault_event draw_failure(double after);
  // A fault at a time: an engine event under the virtual clock, else pending
  // for the polls.
  void schedule(const fault_event& k);
  std::size_t host_of(const fault_event& k) const;
  double seconds_now() const;

  struct thaw {
    std::size_t host;
    double at; // seconds since the start
  };
  std::vector<fault_event> pending_; // not yet carried out (poll)
  std::vector<fault_event> timed_;   // engine events not yet fired
  std::vector<thaw> thaws_;          // wall clock freezes in force
  std::vector<std::string> done_;
  bool armed_ = true;
  bool started_ = false;
  bool held_ = false;
  std::vector<caf::actor_addr> killed_;
  std::vector<fault_event> deferred_; // kills due while held
  const cluster_handles& c_;
  caf::blocking_actor* self_;
  fault_targets targets_;
  placement place_;
  std::uint64_t total_ = 0; // the examples a fraction refers to
  // faults.mtbf (seconds, 0 = none); its draws come from rng_ (model.seed).
  double mtbf_ = 0;
  std::size_t shards_ = 0;
  data::split_mix64 rng_;
  std::uint64_t draws_ = 0;
  caf::actor_clock::time_point start_;
};

} // namespace runtime
