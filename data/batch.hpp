#pragma once
// A mini-batch as the readers produce it and the model consumes it.
//
// Layout is example-major: example e's dense features are
// dense[e*num_dense .. e*num_dense+num_dense), its categorical hashes are
// cat[e*num_cat .. e*num_cat+num_cat). Buffers are reused across batches
// (clear() keeps capacity), so the hot path does no per-example allocation.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace data {

struct batch {
  std::size_t size = 0;       // examples in this batch
  std::size_t num_dense = 13; // dense features per example
  std::size_t num_cat = 26;   // categorical columns per example
  std::vector<float> labels;  // [size], 0 or 1
  std::vector<float> dense;   // [size * num_dense], already log(1 + max(x, 0))
  std::vector<std::uint64_t> cat; // [size * num_cat], 64-bit hashes (see hashing.hpp)
  // [size] user keys (hash_user of the data.user column) when the reader's
  // schema names a user column, else empty.
  std::vector<std::uint64_t> users;
  // Multi-hot batches (a schema with data.multi-hot columns): cat holds every
  // id and cat_offsets has size * num_cat + 1 entries, field (e, c) being
  // cat[cat_offsets[e*num_cat + c] .. cat_offsets[e*num_cat + c + 1]) (one id
  // for a single-hot column, none for an empty bag). Empty otherwise.
  std::vector<std::uint32_t> cat_offsets;

  bool multi_hot() const { return !cat_offsets.empty(); }

  void clear() {
    size = 0;
    labels.clear();
    dense.clear();
    cat.clear();
    users.clear();
    cat_offsets.clear();
  }
};

} // namespace data
