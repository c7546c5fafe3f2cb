#pragma once
// `shadowsync calibrate`'s measurements of the roles' own work per item, with
// the roles' own code on the calibration batches (sim/calibrate.hpp):
// - an embedding shard's lookup and push (actors::embedding_shard_state:
//   the keys' checks, the rows gathered into the reply, the optimiser's
//   step), per distinct row of a batch (sim.lookup-row-ns, sim.push-row-ns);
// - a worker's own handling of a batch besides its dense work
//   (actors::worker_batch: the rows' keys, their de-duplication and split
//   over the shards, the lookups' keys, the replies' rows into the input,
//   the pushes' keys and gradients), per id of the batch (sim.batch-id-ns);
// - dct.mp: a worker's thresholded push and a shard's thresholded reply, per
//   value (sim.mp-push-value-ns, sim.mp-reply-value-ns).
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

// dct.mp at cfg.dct's settings (mp on): per gradient value, a worker's
// straight-through push of a batch's distinct rows (model::threshold_row_push
// with error feedback, as the worker calls it); per value of a shard's
// thresholded reply (embedding_shard_state::sparse_lookup), less the rows'
// lookup at `lookup_row_ns`.
// The push also as a run's map grows: `stream`'s batches pushed in order
// (a worker's share of a longer run), the last quarter timed against the
// map the first three quarters left; that time per value, at its mean map
// size, extended log-linearly to mp_push_big_map_rows (push_value_big_ns,
// the law mp_push_ns() prices by; 0 without error feedback or with too
// small a stream), and the map's rows of the first measurement (map_rows).
// Per value of the replies' dense size, the worker's decode of each and the
// scatter of its entries (decode_value_ns).
struct mp_costs {
  double push_value_ns = 0, reply_value_ns = 0, decode_value_ns = 0;
  double map_rows = 0, push_value_big_ns = 0;
  double stream_map_rows = 0, stream_value_ns = 0; // the stream's window
};

mp_costs measure_mp(const train_config& cfg, const std::vector<data::batch>& batches,
                    const std::vector<data::batch>& stream, double lookup_row_ns);

} // namespace runtime::calibrate_detail
