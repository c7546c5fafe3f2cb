#pragma once
// Reader -> worker: one mini-batch in wire form.
#include <cstddef>
#include <cstdint>

#include <caf/meta/type_name.hpp>

#include "messages/blobs.hpp"

namespace messages {

// One mini-batch as data::batch holds it, in wire form.
struct example_batch {
  std::uint64_t seq = 0; // per reader, from 0
  std::uint32_t num_dense = 0;
  std::uint32_t num_cat = 0;
  float_blob labels; // [size]
  float_blob dense;  // [size * num_dense]
  key_blob cat;      // [size * num_cat] hashes, or every id of the bags
  // Multi-hot (data.multi-hot): [size * num_cat + 1], field (e, c) being
  // cat[offsets[e*num_cat + c] .. offsets[e*num_cat + c + 1]) as in
  // data::batch::cat_offsets; empty for single-hot batches.
  raw_blob<std::uint32_t> cat_offsets;
  std::uint64_t malformed = 0; // end-of-data batch: malformed lines the reader skipped
  std::uint64_t cut_bags = 0;  // end-of-data batch: bags it cut to data.max-ids
  std::size_t size() const { return labels.size(); }
  friend bool operator==(const example_batch& a, const example_batch& b) {
    return a.seq == b.seq && a.num_dense == b.num_dense && a.num_cat == b.num_cat &&
           a.labels == b.labels && a.dense == b.dense && a.cat == b.cat &&
           a.cat_offsets == b.cat_offsets && a.malformed == b.malformed && a.cut_bags == b.cut_bags;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, example_batch& x) {
  return f(caf::meta::type_name("example_batch"), x.seq, x.num_dense, x.num_cat, x.labels, x.dense,
           x.cat, x.cat_offsets, x.malformed, x.cut_bags);
}

} // namespace messages
