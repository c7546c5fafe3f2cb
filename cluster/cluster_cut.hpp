#pragma once
// Periodic checkpoints of the running simulated cluster: consistent cuts
// taken while it trains (DESIGN.md section 9; issue "checkpoints").
//
// Consistency. A cut must hold every example's whole update (its dense step,
// every embedding row it touched with the optimiser state) and count it
// before the saved reader positions, or hold none of it. The protocol is an
// aligned-marker snapshot over CAF's per-sender FIFO mailboxes (Chandy-
// Lamport; the alignment of Carbone et al. 2015):
//   1. Ring methods (MA, BMUF): the syncers must hold at one common round R,
//      or the ring deadlocks. The coordinator asks each syncer aim(R), which
//      forbids rounds beyond max(R, its round in flight) and answers that
//      round, and aims every syncer at the largest answer, which all then
//      give (two passes; shadow_syncer.hpp). EASGD and none: R = 0.
//   2. -> every embedding shard: cut(N, FOLDER, W workers).
//   3. -> every trainer: cut(N, last). The trainer holds its syncer after
//      round `last` (EASGD: after the exchange in flight), and each worker
//      drains: no new batch, the batches in hand trained and pushed, then
//      marker N to every shard, parked. With all parked and the syncer held
//      the replica is copied with the reader's position, and the workers go
//      on at once. Every batch the reader served before is in the copy; none
//      after it was started.
//   4. A shard aligns: once every worker's marker (or end) is in, its tables
//      hold exactly the pushes of the examples before the cut (FIFO: a
//      worker's pushes precede its marker). Pushes that came after a marker
//      wait in the shard until then. A background writer streams the file,
//      copying rows on write, so lookups and pushes go on.
//   5. With every syncer held, nothing moves between replicas and the EASGD
//      centre: the coordinator dumps the dense shards (centre.bin), then
//      releases the syncers (resume). BMUF's w_g and Delta come with the
//      holds, identical in every syncer (bmuf.bin; checked).
//   6. The shards' files are in: replicas, manifest, atomic commit.
// The only pause is a worker's, from its drain to the replica copy
// (cut_report::pause_seconds); the dense sync pauses from step 3 to 5.
//
// Mid-pass cuts resume only with the same number of trainers (readers split
// the data by trainer); any number of embedding shards. After a trainer's
// loss a cut holds a stand-in for it (cluster_checkpointer::stand_in: its
// position at the newest cut), and the shards align over the live workers
// (cut_run.hpp). Multi-node runs take
// cuts too: the shards keep their files and the coordinator's node fetches
// them (cluster_checkpointer::fetch_shard_files, cut_run.hpp).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/fwd.hpp>

#include "checkpoint/store.hpp"
#include "messages/cut_messages.hpp"
#include "cluster/coordinator.hpp"

namespace runtime {

struct cut_totals {
  std::uint64_t cuts = 0, bytes = 0;
  double seconds = 0;        // coordinator time from request to commit, summed
  double max_pause = 0;      // the longest worker pause of any trainer
  std::uint64_t pushes_held = 0, rows_copied = 0;
};

// What a cut gathered before its commit (cluster/cut_run.hpp walks the
// protocol; the checkpointer writes and counts).
struct cut_gathered {
  std::vector<messages::cut_report> reports; // per trainer
  // Trainers lost before the cut: their reports are stand-ins
  // (cluster_checkpointer::stand_in), in trainer order.
  std::vector<std::size_t> stand_ins;
  std::vector<float> centre;                 // EASGD: the dense shards' centre, else empty
  std::uint64_t pushes_held = 0, rows_copied = 0;
  caf::actor_clock::time_point began;        // the cut's request
};

// Step 6 with everything it reads held by value (cluster_checkpointer::
// prepare), so that it may run on a thread that outlives the checkpointer: a
// multi-node cut's fetching thread, when the run ends while it writes.
struct cut_commit {
  checkpoint::manifest m; // config, mode, seed; the base's examples and counters
  std::vector<std::string> trainer_names;
  bool bmuf = false;
  std::size_t keep = 0;
  cut_gathered g;
  // What write_cut committed.
  std::string folder;
  std::uint64_t bytes = 0;
  double max_pause = 0;
};

// Trainer t's part (of `parts`) in a manifest: its reader position, and its
// progress (examples, train-NE sums, positives) and malformed lines added
// to the manifest's counts (write_cut; a stand-in in the end's export).
void add_trainer_part(checkpoint::manifest& m, std::size_t t, std::size_t parts,
                      const messages::cut_report& r);

// Replicas, centre, BMUF state, manifest, commit into `w` (begun in
// checkpoint.dir); fills job's folder, bytes and max_pause. An error leaves
// `w` abandoned.
std::optional<std::string> write_cut(checkpoint::folder_writer& w, cut_commit& job);

class cluster_checkpointer;

// A stop by signal's message: "stopped by BY after N examples" and what it
// kept: "; the checkpoint of this point: DIR" when the stop's cut committed
// (ck counts more cuts than `cuts_before`), "; the newest checkpoint: DIR"
// when it did not (the stop's cut failed), "; no checkpoint kept"
// without any, "; no checkpoint.dir: nothing kept" without ck.
std::string stopped_text(const std::string& by, std::uint64_t examples,
                         const cluster_checkpointer* ck, std::uint64_t cuts_before);

// The cuts' bookkeeping, shared by the caller of coordinate() (when a cut
// is due, the totals, full recovery's rollbacks) and the coordinator actor
// (which runs each cut: cut_run.hpp). Only one of them touches it at a
// time: the caller inside the coordinator's hooks and after its outcome,
// the coordinator between them.
class cluster_checkpointer {
public:
  // sys: its clock (virtual under sim.clock=virtual); base: the runs before
  // this one (resume).
  cluster_checkpointer(caf::actor_system& sys, const train_config& cfg, const cluster_handles& c,
                       const resume_base& base);
  // Whether a cut is due by checkpoint.every-examples or .every-seconds,
  // with the examples trained so far (the progress poll).
  bool due(std::uint64_t examples) const;
  // A cut that was due ended (committed or not): the next is due from now
  // and from `examples` on.
  void cut_ended(std::uint64_t examples);
  // Over every attempt (restart), like newest().
  const cut_totals& totals() const { return totals_; }
  // Full recovery: the cluster was built again from `base` (a rollback);
  // the next cut counts from there and from now.
  void restart(const resume_base& base);
  // Cuts by time from now on every `s` seconds (checkpoint.every-seconds
  // at first; full recovery retunes it from the cuts' measured length).
  void set_every_seconds(double s) { every_seconds_ = s; }
  // The folder of the newest cut committed by this checkpointer, or empty.
  // It survives a restart: a rollback goes back to it.
  const std::string& newest() const { return newest_; }

  // Multi-node: the embedding shards keep their cut files in memory (asked
  // cut(N, "", W)) and each cut fetches them over the wire into its folder
  // (cluster/shard_fetch.hpp) and commits it on a thread of its own, not in
  // the coordinator's handlers (cut_run.cpp); the manifests say `mode`.
  void fetch_shard_files(std::string mode) {
    fetch_ = true;
    mode_ = std::move(mode);
  }
  bool fetches_shard_files() const { return fetch_; }

  // -- for the cut in flight (cut_run.cpp) --
  const train_config& config() const { return cfg_; }
  const cluster_handles& cluster() const { return c_; }
  std::uint64_t next_id() { return ++id_; }
  caf::actor_clock::time_point now() const;
  // Step 6 in three parts: prepare (the job, with the run's seconds up to
  // now), write_cut (the files; any thread), committed (newest(), the totals
  // and the log line; the coordinator again). commit: all three at once.
  cut_commit prepare(cut_gathered g) const;
  void committed(const cut_commit& job);
  std::optional<std::string> commit(checkpoint::folder_writer& w, cut_gathered g);
  // A cut after trainers' losses (lost[t]): each lost trainer's report is a
  // stand-in, its reader position and progress at the newest committed cut
  // (or this run's start) with the live replicas' average (parameters and
  // optimiser state) and a live trainer's sync hold, so that a resume with
  // the same trainer count brings it back from there: the examples it
  // trained after that cut are trained again, as after any resume, and the
  // cut counts them once. An error when no trainer is live.
  std::optional<std::string> stand_in(cut_gathered& g, const std::vector<bool>& lost) const;
  // Trainer t's reader position and progress at the newest committed cut
  // (else this run's start).
  messages::cut_report mark(std::size_t t) const {
    return t < marks_.size() ? marks_[t] : messages::cut_report{};
  }

private:
  double since(caf::actor_clock::time_point t) const;
  void restart_marks();
  caf::actor_system& sys_;
  const train_config& cfg_;
  const cluster_handles& c_;
  resume_base base_;
  std::uint64_t next_examples_ = 0, id_ = 0;
  caf::actor_clock::time_point began_, last_; // the coordinator's clock
  double every_seconds_;
  cut_totals totals_;
  std::string newest_;
  // Per trainer: its reader position and progress at the newest committed
  // cut, else at this run's start (stand_in).
  std::vector<messages::cut_report> marks_;
  bool fetch_ = false;
  std::string mode_ = "simulated"; // the manifests'
};

} // namespace runtime
