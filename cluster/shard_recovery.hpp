#pragma once
// Partial recovery of a lost embedding shard (recovery.mode=partial; CPR,
// DESIGN.md section 11), the coordinator's side:
//   1. the shard's DOWN reaches the coordinator;
//   2. restart(i) to the caller (awaited): the runtime spawns a new shard
//      with the same config in the lost one's place
//      (cluster_handles::shards[i]); multi-node, on a new process of its
//      node;
//   3. the coordinator actor asks it to reload its own newest checkpoint
//      (recover_atom, a continuation: the coordinator handles its other
//      messages meanwhile, DOWNs above all, but neither polls nor moves to
//      the next phase); the reply says when that save was taken, and goes
//      on to the caller as restarted(i, shard_restart) for the report;
//   4. the coordinator actor monitors the new shard and sends rebind(i,
//      handle) to every live trainer, which passes it on to its workers;
//      their lookups that died with the old shard go again
//      (coordinator_restarts.cpp).
// Every other role trains on meanwhile. What is lost: the shard's updates
// since its newest save (pushes to the dead shard are dropped as well).
//
// Lost examples are counted as in the CPR paper's PLS: the examples trained
// between the shard's newest save and its failure (from the coordinator's
// progress samples, interpolated), each of which lost the updates to one of
// N shards' rows, so they count 1/N each.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/blocking_actor.hpp>

#include "actors/embedding_shard_cpr.hpp"
#include "actors/interfaces.hpp"
#include "report/run_metrics.hpp"
#include "config/train_config.hpp"

namespace runtime {

struct cluster_handles;

// A restarted shard's reload (recover_atom's reply), with the coordinator's
// times of the loss and of the reply (actor clock, ns): the restarted hook.
struct shard_restart {
  std::uint64_t bytes = 0, saves = 0;
  std::int64_t newest_save_ns = 0; // actor clock; INT64_MIN: none (the initial rows)
  std::int64_t ready_ns = 0;       // actor clock: the reload done
  std::int64_t down_ns = 0;        // the DOWN handled, the restart asked
  std::int64_t reply_ns = 0;       // the reload's reply in
};

// Step 2: puts a new embedding shard i in c.shards[i] (not yet reloaded).
// cut: the checkpoint cut in flight when it was lost (0: none), over for
// the new shard (actors::embedding_shard_config::cuts_over). An error
// names what failed.
using restart_fn = std::function<std::optional<std::string>(std::size_t shard, std::uint64_t cut)>;

// The runtime's side of step 2 in the simulated cluster: embedding shard i
// again, in c.shards[i], with the lost one's config and counters.
void place_shard(caf::actor_system& sys, const train_config& cfg,
                 const std::shared_ptr<actors::cpr_counters>& cpr, cluster_handles& c,
                 std::size_t i, std::uint64_t cut);

// The CPR settings and the shards' save counters into out.recovery.
void report_recovery(const train_config& cfg, const actors::cpr_counters& k, run_metrics& out);

class shard_recovery {
public:
  shard_recovery(caf::blocking_actor* self, const cluster_handles& c, restart_fn restart);
  bool enabled() const { return static_cast<bool>(restart_); }
  // Training starts at t0, the zero of the events' times (and the fault
  // injector's).
  void start(caf::actor_clock::time_point t0);
  // A progress sample: `examples` trained by now.
  void sample(std::uint64_t examples);
  // Shard i went down (`why`): step 2. An error when the restart failed.
  std::optional<std::string> place(std::size_t i, const std::string& why, std::uint64_t cut);
  // Step 3 done: shard i reloaded (r); the event for the report.
  void restarted(std::size_t i, const shard_restart& r);
  // Fills out.recovery's failures, events, lost examples and outage.
  void report(run_metrics& out) const;

private:
  double seconds(caf::actor_clock::time_point t) const;
  double examples_at(double t) const; // interpolated from the samples

  caf::blocking_actor* self_;
  const cluster_handles& c_;
  restart_fn restart_;
  caf::actor_clock::time_point t0_{};
  std::vector<std::pair<double, double>> samples_; // (seconds, examples)
  struct loss {
    std::string event;     // without the examples since the save
    double saved_at, at;   // seconds: the newest save, the failure
  };
  std::vector<loss> losses_;
  double outage_ = 0;
};

} // namespace runtime

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(runtime::shard_restart)
