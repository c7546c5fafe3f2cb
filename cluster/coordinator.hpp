#pragma once
// The coordinator's protocol over a running cluster, wherever its actors live
// (one process: cluster.cpp; several: node.cpp through CAF's middleman). Its
// phases and the trainers' losses are the state machine of
// coordinator_phases.hpp; steps 1-3 are an event-based actor
// (coordinator_actor.hpp) whose hooks the caller of coordinate() serves:
//   1. ask every trainer for its syncer and wire the ring (MA / BMUF);
//   2. start every trainer; poll progress while they train; the start replies
//      come when each trainer's data is exhausted;
//   3. coordinated stop: ask the sync rounds, send every trainer
//      stop(max + 1), collect the trainer reports;
//   4. aggregate the metrics, gather the embedding shards' rows and the
//      chosen dense parameters, evaluate.
// The caller spawns the actors before and stops them after.
//
// Failures. Every request has cluster.timeout (training itself has none: it
// ends when the data does, and progress polls have the timeout). Shards,
// trainers and the watched nodes are monitored:
// - a shard (or a node hosting one) going down ends the job with an error
//   naming it, unless opts.restart_shard recovers it (shard_recovery.hpp)
//   or opts.rollback_on_shard_loss hands it to the caller (full_recovery.hpp);
// - a trainer going down ends the job, unless tolerate_trainer_loss
//   (multi-node): then it leaves the job, the ring is re-formed among the
//   survivors (peers_atom with a new generation), S-EASGD simply loses a
//   client, and the metrics name the lost trainers. Losing every trainer,
//   or a trainer during the coordinated stop, is an error.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/blocking_actor.hpp>

#include "actors/interfaces.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/model_files.hpp"
#include "model/dlrm.hpp"
#include "model/dynamic_tables.hpp"
#include "model/embedding.hpp"
#include "cluster/coordination.hpp"
#include "report/progress.hpp"
#include "report/run_metrics.hpp"
#include "cluster/shard_recovery.hpp"
#include "config/train_config.hpp"

namespace runtime {

class cluster_checkpointer;

// What a resumed run starts from: examples and counters (train-NE sums,
// malformed lines, seconds) of the runs before it; zero for a fresh run.
struct resume_base {
  std::uint64_t examples = 0;
  checkpoint::run_counters counters;
  // Each trainer's reader position at the start (empty: every reader from
  // the beginning): what a cut after a trainer's loss, taken before any cut
  // of this run, holds for that trainer.
  std::vector<messages::reader_mark> readers;
};

// The counters after this run: the base plus every report's.
checkpoint::run_counters counters_after(const resume_base& base,
                                        const coordination_result& res, const run_metrics& out);

// Where an export's embedding shard files come from, and its manifest's mode.
struct export_options {
  std::string mode = "simulated";
  // false: each shard writes its own file into the folder (one process);
  // true: the coordinator fetches each file over the wire and writes it (a
  // multi-node run, whose shards may run on other hosts: shard_fetch.hpp).
  bool fetch_shards = false;
  // checkpoint.dir's export at the end: with trainers lost, their parts as
  // at the newest cut (cluster_checkpointer::mark), so that a resume trains
  // them; null (output.model): the survivors' replicas alone, every pass done.
  const cluster_checkpointer* marks = nullptr;
};

// output.model after a successful coordinate(): the embedding shards' files
// (see export_options), the trainers' replicas and the manifest by the
// coordinator (cluster/cluster_checkpoint.cpp).
// Writes into checkpoint dir `dir`, keeping the newest `keep`; the EASGD
// centre is dumped from the dense shards (centre.bin). base: the runs
// before this one (resume).
std::optional<std::string> export_cluster_model(caf::blocking_actor* self, const train_config& cfg,
                                                const cluster_handles& c,
                                                const coordination_result& res,
                                                const run_metrics& out, const std::string& dir,
                                                std::size_t keep, const resume_base& base,
                                                const export_options& how = {});

// Resume of the simulated cluster from a checkpoint: the whole tables (each
// embedding shard copies its rows, whatever the shard count was); per
// trainer its own replica when the trainer count is the checkpoint's, else
// the average of the saved replicas and their dense optimiser states; the
// EASGD centre (or that average); each reader's position. A cut inside a
// pass (cluster_cut.hpp) needs the checkpoint's trainer count; one at the
// end of a pass (the end of a run, sequential or simulated) takes any.
struct cluster_start {
  std::shared_ptr<const model::embedding_tables> tables;
  // model.embedding=dynamic: every dynamic-S.bin of the checkpoint (each
  // shard copies the rows of its ids); `tables` is then null.
  std::shared_ptr<const model::dynamic_tables> dynamic;
  // ... and the shards' own admission sketches and table counters, from
  // files written by a simulated cluster's or a node's shards.
  std::vector<checkpoint::shard_counters> dynamic_counters;
  std::vector<float> params, state;                 // the average
  std::vector<checkpoint::replica_state> replicas;  // per trainer, or empty
  std::vector<float> centre;
  // BMUF: the saved block state (w_g, Delta), or empty (then w_g starts at
  // `params` in every syncer, Delta at 0).
  std::vector<float> bmuf_global, bmuf_momentum;
  std::vector<messages::reader_mark> readers;       // per trainer
  std::uint64_t passes_done = 0, examples = 0;
  checkpoint::run_counters counters; // the metrics so far
  std::string folder;
};
// tables = false: everything but the embedding rows (a multi-node run's node
// that hosts no embedding shard).
std::optional<std::string> load_cluster_start(const train_config& cfg, const model::dlrm& net,
                                              cluster_start& out, bool tables = true);
// The readers' start positions of a resume from `c` (load_cluster_start's):
// readers per trainer, passes_done, and whether `c` was cut inside a pass
// (mid_pass, if given). An error when it was, with another trainer count.
std::optional<std::string> resume_readers(const train_config& cfg,
                                          const checkpoint::opened_checkpoint& c,
                                          std::vector<messages::reader_mark>& readers,
                                          std::uint64_t& passes_done, bool* mid_pass = nullptr);

// Runs steps 1-4. Returns an error message when the job failed.
std::optional<std::string> coordinate(caf::blocking_actor* self, const train_config& cfg,
                                      const model::dlrm& net, const cluster_handles& c,
                                      const coordinator_options& opts, progress_reporter& progress,
                                      run_metrics& out, coordination_result& res);

// Step 4's evaluation on its own: gathers every embedding shard's rows and
// the dense parameters chosen by sync.eval-model (the average of the
// surviving replicas, the first surviving trainer's, or the EASGD centre)
// and evaluates them on data.eval.
std::optional<std::string> evaluate_cluster(caf::blocking_actor* self, const train_config& cfg,
                                            const model::dlrm& net, const cluster_handles& c,
                                            const coordination_result& res, run_metrics& out);

// model.embedding=dynamic (cluster_dynamic.cpp). The shards' tables
// gathered into `t` (as constructed; no optimiser state), for evaluation;
// their counters summed into out.embedding. An error names the shard.
std::optional<std::string> gather_dynamic_tables(caf::blocking_actor* self,
                                                 const train_config& cfg,
                                                 const cluster_handles& c,
                                                 model::dynamic_tables& t);
std::optional<std::string> gather_dynamic_metrics(caf::blocking_actor* self,
                                                  const train_config& cfg,
                                                  const cluster_handles& c, run_metrics& out);

// The EASGD centre: every dense shard's range copied into `params` (sized
// to the dense layout). Only meaningful while no exchange is in flight (the
// syncers stopped or held). An error names the dense shard.
std::optional<std::string> gather_centre(caf::blocking_actor* self, const train_config& cfg,
                                         const cluster_handles& c, std::vector<float>& params);

} // namespace runtime
