#pragma once
// `shadowsync calibrate`'s measurements of a worker's dense work
// (sim.gflops, sim.core-contention; sim/calibrate.hpp): the work itself on
// prepared batches, and what the machine's cores cost each other doing it
// on one shared Hogwild replica.
#include <cstddef>
#include <vector>

#include "actors/hogwild_replica.hpp"
#include "config/train_config.hpp"
#include "data/batch.hpp"
#include "model/dlrm.hpp"
#include "model/embedding.hpp"

namespace runtime::calibrate_detail {

// A worker's dense work on prepared batches (sim.gflops, sim.core-contention):
// forward and backward on a live Hogwild replica with the batches' rows
// looked up beforehand (all zero rows: the shards charge the rows' work),
// then the lock-free dense step, as hogwild_worker_step.cpp's train() does.
class dense_work {
public:
  dense_work(const train_config& cfg, const std::vector<data::batch>& batches)
    : cfg_(cfg), batches_(batches), tables_(cfg.arch.num_tables, cfg.arch.rows_per_table,
                                            cfg.arch.dim, 1),
      rows_(batches.size()), net_(cfg.arch), replica_(initial(cfg, net_)) {
    for (std::size_t i = 0; i < batches.size(); ++i)
      rows_[i].lookup(batches[i].cat.data(), batches[i].size, cfg.arch, tables_);
  }

  std::size_t replica_size() const { return replica_.size(); }

  // Seconds of `times` passes over the batches on the calling thread (each
  // thread its own workspace, one shared replica).
  double passes(std::size_t times);

private:
  static std::vector<float> initial(const train_config& cfg, const model::dlrm& net);

  const train_config& cfg_;
  const std::vector<data::batch>& batches_;
  const model::embedding_tables tables_;
  std::vector<model::batch_lookup> rows_;
  const model::dlrm net_;
  actors::hogwild_replica replica_;
};

// The CPUs this process may run on (empty when unknown).
std::vector<int> allowed_cpus();

// sim.core-contention: the threads' mean time, one thread pinned to each of
// `cpus` stepping `work`'s replica at once, over one thread's time alone on
// the fastest of them (median of seven rounds; `lo`, `hi`: their range).
double measure_contention(dense_work& work, const std::vector<int>& cpus, double& lo, double& hi);

} // namespace runtime::calibrate_detail
