#pragma once
// An up-front estimate of a run's memory, so that a configuration that cannot
// fit is refused with a clear message (exit 2) naming the option to change,
// instead of dying in std::bad_alloc or taking the machine's memory halfway
// through. Every buffer that an option scales is counted, in every mode
// (train, node, launch); what is left out is fixed-size (code, CAF, threads).
//
// Per process, in bytes (B = train.batch-size, E = train.eval-batch-size,
// T trainers and W workers each on this process, P dense parameters,
// R = tables x rows-per-table, ex = 4 + 4 x num_dense + 8 x num_cat bytes of
// one parsed example, act = the float activations of one example through
// both MLPs and the interaction):
//   embedding  R x (dim + optimiser floats) x 4 (the shards on this process)
//   dense      P x 4 x (T x (4 + W) + 2): per trainer replica, accumulators,
//              the syncer's snapshot and reduction buffer, a gradient per
//              worker; the initial parameters and the EASGD centre
//   batches    per trainer a reader buffer of B x ex (sized for a whole batch,
//              or the trainer's share of train.max-examples, before any line
//              is read); per worker two batches in hand and one step's
//              activations, looked-up rows and their gradients,
//              b x (2 ex + act + 3 rows + 12 num_cat), rows = num_cat x dim
//              x 4 (sequential: b x (act + 2 rows + 12 num_cat)), where b = B
//              capped by the examples the trainer can get: its share of
//              train.max-examples, or twice its average share of the data's
//              lines (synthetic rows, or the files' lines, counted in their
//              first 64 MiB and extrapolated beyond) x epochs
//   evaluation E x ex (the reader's buffer) + e x (act + rows + 12 num_cat)
//              for the forward pass, e = E capped by the eval set's lines;
//              8 B of score and label per eval example; a cluster's
//              evaluator copies the tables (R x dim x 4) and one shard's dump
//   readers    per open reader a 1 MiB line buffer and ~64 B per column
//   overhead   64 MiB per process and 8 MiB per trainer (measured: what the
//              parts above leave unexplained in small runs)
//   DCT        dct.dp: 5 x P x 4 per trainer (syncer origin, image and
//              change; the dense shard's mirror and d); dct.mp straight with
//              error feedback: per worker a residual row (dim x 4 + 48 B) per
//              distinct row it pushes, at most R or what its examples touch
// The per-example factors are calibrated against peak RSS (/usr/bin/time -v)
// of runs with full batches; the estimate errs high (every buffer full at
// once): refusing a run that would fit costs the user an option change,
// admitting one that cannot fit costs the machine.
#include <cstdint>
#include <optional>
#include <string>

#include "config/train_config.hpp"

namespace runtime {

struct deploy_settings;

struct memory_estimate {
  double embedding_bytes = 0; // tables and optimiser state
  double dense_bytes = 0;     // replicas, accumulators, sync buffers, worker gradients
  double batch_bytes = 0;     // training batches, activations, looked-up rows
  double eval_bytes = 0;      // evaluation batch, forward pass, scores
  double tables_copy_bytes = 0; // a cluster's evaluator: the tables gathered from the shards
  double reader_bytes = 0;    // line buffers and schema columns
  double dct_bytes = 0;       // DCT thresholding state
  // Checkpoints: a cluster cut written beside training copies the rows it
  // changes (up to the shard's whole tables); CPR's bookkeeping (mfu: a
  // counter per row; ssu: cpr.ssu-sample keys) and its partial save's rows.
  double checkpoint_bytes = 0;
  double overhead_bytes = 0;  // code, CAF, threads, allocator slack
  double total() const {
    return embedding_bytes + dense_bytes + batch_bytes + eval_bytes + tables_copy_bytes +
           reader_bytes + dct_bytes + checkpoint_bytes + overhead_bytes;
  }
};

// Which roles one process holds. whole_job(cfg): every role (train, and
// launch, whose nodes all run on this machine).
struct memory_roles {
  std::size_t trainers = 0;         // of cluster.trainers
  std::size_t embedding_shards = 0; // of cluster.embedding-shards
  std::size_t dense_shards = 0;     // of cluster.dense-shards
  bool evaluates = true;            // the coordinator: evaluation, summary
  std::string who;                  // "" or "node t0", for the message
};
memory_roles whole_job(const train_config& cfg);
// The roles of node `node` in `deploy` (node.cpp spawns exactly these).
memory_roles node_roles(const deploy_settings& deploy, const std::string& node);

memory_estimate estimate_memory(const train_config& cfg);
memory_estimate estimate_memory(const train_config& cfg, const memory_roles& roles);

// The machine's memory in bytes: physical memory (sysconf), or the cgroup's
// limit (memory.max) when that is lower; 0 when unknown.
double physical_memory_bytes();

// An error naming the key to change (that of the largest part) and the
// estimate with its parts, when the estimate exceeds `available` bytes
// (nothing is checked when available is 0). cluster.memory-limit-gib, when
// set, replaces `available`.
std::optional<std::string> check_memory(const train_config& cfg, double available);
std::optional<std::string> check_memory(const train_config& cfg, const memory_roles& roles,
                                        double available);

// "1.5 GiB", "3.2 TiB".
std::string human_bytes(double bytes);

} // namespace runtime
