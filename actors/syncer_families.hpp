#pragma once
// The shadow syncer's state per sync family (shadow_syncer.hpp): what one
// family keeps between rounds, apart from the lifecycle and the ring's
// membership that every family shares.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "actors/sparse_allgather.hpp"
#include "actors/sparse_ring_reduce.hpp"
#include "messages/messages.hpp"
#include "model/dct_sync.hpp"

namespace actors {

// EASGD (s-easgd, fr-easgd; shadow_syncer_easgd.cpp): the round's
// outstanding exchange replies and, with dct.dp, one sender per dense range.
struct easgd_family {
  std::size_t replies_pending = 0;
  std::vector<model::dct_sender> senders;
};

// BMUF's block (s-bmuf, fr-bmuf; model::bmuf_step), identical in every
// syncer: w_g, Delta and where the current block started, [replica size].
struct bmuf_family {
  std::vector<float> global, momentum;
  std::vector<float> block_start;
};

// DCT on the ring (MA / BMUF with dct.dp; shadow_syncer_dct_ring.cpp):
// instead of the dense ring, each member's thresholded change from the
// common picture `base` (bit-identical at every member) goes round once.
// With dct.dp-ring=reduce, `reduce` instead of `gather`: a reduce-scatter
// that re-thresholds the partial sums, over the accumulator `acc`.
struct dct_ring_family {
  std::unique_ptr<sparse_allgather> gather;
  std::unique_ptr<sparse_ring_reduce> reduce;
  std::optional<model::dct_chunk_thresholds> chunk_tau; // reduce: per chunk
  std::vector<float> acc;   // reduce: the round's accumulator [replica size]
  std::vector<float> carry; // reduce: what the last round kept, for the next
  bool take_all = false;    // reduce: this round passes every entry on (a re-formed
                            // ring, a finished trainer)
  bool kept_own = false;    // reduce: a finished trainer's round: its change stays out,
                            // the values go as f32
  std::vector<messages::ring_sparse> early_pieces; // arrived before peers_atom
  std::vector<float> base;                         // [replica size]
  std::optional<model::dct_layer_thresholds> tau;
  model::sparse_vector own;                        // this round's own change, sent
  model::dct_counts counts;                        // own changes, summed
  std::uint64_t received = 0;                      // entries of the others' changes
  std::uint64_t dense_bytes = 0;                   // what the dense ring would have sent
  std::uint64_t dense_bytes_per_round = 0;
  bool resync = false; // a re-formed ring: the next round sends every entry
};

} // namespace actors
