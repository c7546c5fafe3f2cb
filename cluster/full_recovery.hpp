#pragma once
// Full recovery of the simulated cluster (recovery.mode=full; DESIGN.md
// section 11), the baseline CPR is measured against. The cluster takes
// whole-cluster cuts (cluster/cluster_cut.hpp) every checkpoint interval.
// When an embedding shard is lost:
//   1. coordinate() returns with coordination_result::rollback (the loss,
//      and the examples trained since this attempt began);
//   2. roll_back(): every role is stopped and its DOWN awaited; the job's
//      newest cut is opened (none yet: a fresh start), and its
//      load is charged (virtual clock: a shard's part of it over
//      checkpoint.storage-gbps; wall clock: what the load took);
//   3. the caller builds the cluster again from it and coordinates again.
// Nothing is lost: the examples trained since the cut are redone. The time
// from each attempt's start to its rollback, plus the reload, is counted in
// the job's training time, so the overhead against a failure-free run is
// the paper's: saves + loads + redone work.
//
// A failure that falls inside a cut is carried out when the cut ends
// (fault_injector::hold): a cut cannot complete without a shard, and CAF
// 0.17 sends no reply for a request whose receiver dies holding it. This
// shifts such a failure by the cut's length (milliseconds), in the
// baseline's favour.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/blocking_actor.hpp>

#include "cluster/cluster_cut.hpp"
#include "cluster/coordinator.hpp"
#include "sim/virtual_time.hpp"

namespace runtime {

// Full recovery with the interval left to Young/Daly (no checkpoint.every-*
// or cpr.interval given): sqrt(2 x C x MTBF) with C the mean measured length
// of the cuts so far. The options' estimate (the store's time alone) holds
// until the first cut.
std::optional<double> young_daly(const train_config& cfg, const cut_totals& cuts);

// Sends every role of c an exit and waits for their DOWNs, up to `timeout`
// (a rollback here; the end of every simulated run too). An error says how
// many roles are still up.
std::optional<std::string> stop_cluster(caf::blocking_actor* self, const cluster_handles& c,
                                        std::chrono::milliseconds timeout);

class full_recovery {
public:
  // engine: the virtual clock's, or null (wall clock).
  full_recovery(caf::blocking_actor* self, const train_config& cfg, virtual_engine* engine);
  // An attempt (the first, or one after a rollback) starts coordinating now.
  void attempt_began();
  // Step 2 of the header: the cluster c stopped, `start` and `base` set
  // from `cut`, this job's newest cut (empty: none yet; then start stays
  // empty and base zero). tables = false: start gets no embedding rows (a
  // multi-node coordinator, whose nodes each read their part of the cut
  // when they start again; it reads the manifest and the dense state).
  std::optional<std::string> roll_back(const shard_loss& loss, const cluster_handles& c,
                                       const model::dlrm& net, const std::string& cut,
                                       std::optional<cluster_start>& start, resume_base& base,
                                       bool tables = true);
  // Multi-node: the rolled-back cluster ran again `seconds` after
  // roll_back() returned (the lost node's new process awaited, every role
  // started again from the cut); counted in the outage and the job's time.
  void restarted(double seconds);
  std::size_t rollbacks() const { return events_.size(); }
  // After the last attempt: out.seconds and out.examples over the whole job
  // (the redone examples not counted twice), and out.recovery with the
  // cuts' totals. base: the last attempt's.
  void report(run_metrics& out, const resume_base& base, const cut_totals& cuts) const;

private:
  double since(caf::actor_clock::time_point t) const;

  caf::blocking_actor* self_;
  const train_config& cfg_;
  virtual_engine* engine_;
  caf::actor_clock::time_point attempt_{};
  double lost_seconds_ = 0, load_seconds_ = 0, outage_seconds_ = 0;
  std::uint64_t redone_ = 0, load_bytes_ = 0, loads_ = 0;
  std::vector<std::string> events_;
};

} // namespace runtime
