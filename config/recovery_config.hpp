#pragma once
// [recovery] and [cpr] options of `train` (DESIGN.md section 11; CPR, Maeng
// et al., MLSys'21), with faults.mtbf:
//   recovery.mode            none: a lost embedding shard ends the job;
//                            partial: it is restarted from its own newest
//                            checkpoint and everyone else trains on;
//                            full: the whole cluster rolls back to its
//                            newest cut (checkpoint.every-*, else every
//                            interval) and redoes the lost work
//   cpr.policy               full | mfu | ssu (checkpoint/cpr_policy.hpp)
//   cpr.fraction             r: the share of rows a partial save writes
//   cpr.full-every           a full save every K saves
//   cpr.ssu-sample           SSU's sample of updates per interval
//   cpr.interval             seconds between a shard's saves, or 0: from
//                            cpr.target-pls and the MTBF,
//                            T = 2 x PLS x MTBF x embedding shards;
//                            full: between cuts, or 0: Young/Daly,
//                            T = sqrt(2 x save seconds x MTBF)
//   cpr.target-pls           the portion of lost samples aimed at
//   cpr.mtbf                 the MTBF the interval is chosen for (0: faults.mtbf)
//   checkpoint.storage-gbps  the checkpoint store's bandwidth per shard, GB/s,
//                            charged under sim.clock=virtual
//   faults.mtbf              embedding shard failures drawn from an
//                            exponential distribution with this mean (seconds
//                            of training; seeded by model.seed)
//   faults.time-scale        both MTBFs are multiplied by it (a production
//                            MTBF of hours onto a run of seconds)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "checkpoint/cpr_policy.hpp"
#include "config/modes.hpp"
#include "config/options.hpp"

namespace runtime {

struct recovery_settings {
  bool partial = false; // recovery.mode=partial
  bool full = false;    // recovery.mode=full
  checkpoint::cpr_policy policy = checkpoint::cpr_policy::full;
  double fraction = 0.25;
  std::uint64_t full_every = 4;
  std::size_t ssu_sample = 16384;
  double interval_seconds = 0; // resolved: each shard saves this often
  double target_pls = 0;       // 0: the interval was given
  double mtbf_seconds = 0;     // the interval's MTBF (scaled)
  double storage_gbps = 0.5;
  double faults_mtbf_seconds = 0; // scaled; 0 = no drawn failures
  double save_estimate_seconds = 0; // full, Young/Daly: a shard's cut / storage_gbps
};

void add_recovery_options(option_set& o);

// Reads the options; errors name the key. `mode` is cluster.mode,
// `checkpoint_dir` checkpoint.dir (partial recovery saves under it),
// `periodic_cuts` whether checkpoint.every-* asks for cluster cuts,
// `shard_checkpoint_bytes` an embedding shard's part of a cut (rows and
// optimiser state: Young/Daly's save time).
std::optional<std::string> build_recovery_settings(const option_set& o, cluster_mode mode,
                                                   std::size_t embedding_shards,
                                                   double shard_checkpoint_bytes,
                                                   const std::string& checkpoint_dir,
                                                   bool periodic_cuts, recovery_settings& out);

} // namespace runtime
