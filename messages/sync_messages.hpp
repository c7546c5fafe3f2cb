#pragma once
// Dense synchronisation: a shadow syncer's range to a dense shard (EASGD) and
// the ring all-reduce's chunks among the syncers (MA, BMUF), dense or
// DCT-thresholded (dct.dp).
#include <cstdint>

#include <caf/meta/type_name.hpp>

#include "messages/blobs.hpp"

namespace messages {

// A contiguous range [offset, offset + values.size()) of the flat dense buffer:
// S-EASGD sends its replica's range to the dense shard owning it; the reply
// (also a dense_range) carries the elastic difference d = alpha (w_i - centre).
struct dense_range {
  std::uint64_t offset = 0;
  float_blob values;
  friend bool operator==(const dense_range& a, const dense_range& b) {
    return a.offset == b.offset && a.values == b.values;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dense_range& x) {
  return f(caf::meta::type_name("dense_range"), x.offset, x.values);
}

// DCT (dct.dp, model/dct_sync.hpp): the thresholded change of a trainer's
// range, and the shard's thresholded d in reply, in model/dct_codec's wire
// form (indices or bitmap + values). `trainer` picks the shard's mirror.
struct sparse_range {
  std::uint64_t offset = 0;
  std::uint32_t trainer = 0;
  byte_blob payload;
  friend bool operator==(const sparse_range& a, const sparse_range& b) {
    return a.offset == b.offset && a.trainer == b.trainer && a.payload == b.payload;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sparse_range& x) {
  return f(caf::meta::type_name("sparse_range"), x.offset, x.trainer, x.payload);
}

// One step of a chunked ring all-reduce among the shadow syncers. Steps
// 0..N-2 are reduce-scatter (add), N-1..2N-3 all-gather (copy).
struct ring_chunk {
  std::uint32_t generation = 0; // ring membership; a re-formed ring counts up
  std::uint64_t round = 0;
  std::uint32_t step = 0;
  std::uint32_t chunk = 0;
  float_blob values;
  friend bool operator==(const ring_chunk& a, const ring_chunk& b) {
    return a.generation == b.generation && a.round == b.round && a.step == b.step && a.chunk == b.chunk && a.values == b.values;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ring_chunk& x) {
  return f(caf::meta::type_name("ring_chunk"), x.generation, x.round, x.step, x.chunk, x.values);
}

// DCT for MA/BMUF (dct.dp), in model/dct_codec's form. dct.dp-ring=gather
// (actors/sparse_allgather.hpp): one member's thresholded change, travelling
// the ring once; `origin` is the rank whose change it is, `step` 0.
// dct.dp-ring=reduce (actors/sparse_ring_reduce.hpp): a thresholded partial
// sum of one chunk of the replica (reduce-scatter steps) or a chunk's
// thresholded sum (all-gather steps); `origin` is the chunk, `step` the
// round's step.
struct ring_sparse {
  std::uint32_t generation = 0; // ring membership, as ring_chunk's
  std::uint64_t round = 0;
  std::uint32_t origin = 0;     // gather: the rank whose change it is; reduce: the chunk
  std::uint32_t step = 0;       // reduce: the step of the round (0 .. 2 (N - 1) - 1)
  byte_blob payload;
  friend bool operator==(const ring_sparse& a, const ring_sparse& b) {
    return a.generation == b.generation && a.round == b.round && a.origin == b.origin &&
           a.step == b.step && a.payload == b.payload;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ring_sparse& x) {
  return f(caf::meta::type_name("ring_sparse"), x.generation, x.round, x.origin, x.step,
           x.payload);
}

} // namespace messages
