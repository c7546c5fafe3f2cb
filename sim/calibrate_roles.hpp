#pragma once
// `shadowsync calibrate`'s measurements of the roles' own work per item, with
// the roles' own code on the calibration batches (sim/calibrate.hpp):
// - an embedding shard's lookup and push (actors::embedding_shard_state:
//   the keys' checks, the rows gathered into the reply, the optimiser's
//   step), per distinct row of a batch (sim.lookup-row-ns, sim.push-row-ns);
// - a worker's own handling of a batch besides its dense work
//   (actors::worker_batch: the rows' keys, their de-duplication and split
//   over the shards, the lookups' keys, the replies' rows into the input,
//   the pushes' keys and gradients), per id of the batch (sim.batch-id-ns).
// Each is the median of five timed passes over the batches on one core.
#include <vector>

#include "config/train_config.hpp"
#include "data/batch.hpp"

namespace runtime::calibrate_detail {

struct row_costs {
  double lookup_ns = 0, push_ns = 0;
};

row_costs measure_rows(const train_config& cfg, const std::vector<data::batch>& batches);

double measure_batch_ids(const train_config& cfg, const std::vector<data::batch>& batches);

} // namespace runtime::calibrate_detail
