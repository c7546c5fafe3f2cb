#pragma once
// Worker <-> embedding shard: lookups and their rows, gradient pushes, and
// their DCT-thresholded forms (dct.mp). Keys and floats are raw blobs.
#include <cstdint>

#include <caf/meta/type_name.hpp>

#include "messages/blobs.hpp"

namespace messages {

// Lookup: de-duplicated row keys (model::row_key) of one shard for one batch.
// Reply: embedding_rows with dim floats per key, in the order of the keys.
struct lookup_request {
  std::uint64_t batch = 0; // requester's batch sequence number, echoed back
  key_blob keys;
  friend bool operator==(const lookup_request& a, const lookup_request& b) {
    return a.batch == b.batch && a.keys == b.keys;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lookup_request& x) {
  return f(caf::meta::type_name("lookup_request"), x.batch, x.keys);
}

struct embedding_rows {
  std::uint64_t batch = 0;
  float_blob rows; // [keys * dim]
  friend bool operator==(const embedding_rows& a, const embedding_rows& b) {
    return a.batch == b.batch && a.rows == b.rows;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embedding_rows& x) {
  return f(caf::meta::type_name("embedding_rows"), x.batch, x.rows);
}

// Push: the summed gradient of each key (dim floats per key), applied by the
// shard's sparse optimiser. Fire and forget (Hogwild across trainers).
struct embedding_grads {
  key_blob keys;
  float_blob grads; // [keys * dim]
  friend bool operator==(const embedding_grads& a, const embedding_grads& b) {
    return a.keys == b.keys && a.grads == b.grads;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embedding_grads& x) {
  return f(caf::meta::type_name("embedding_grads"), x.keys, x.grads);
}

// DCT (dct.mp, model/dct_mp.hpp): a lookup's reply and a push with their
// floats thresholded, in model/dct_codec's wire form over [keys * dim]
// (indices or bitmap + values). `refreshes`: the threshold estimates this
// reply made at the shard (for the metrics).
// `marks`: dynamic tables only (empty for hashed ones), the rows of ids
// without a row and the rows new to the asking worker, in
// model/dct_mp_dynamic's wire form over the keys' rows.
struct sparse_rows {
  std::uint64_t batch = 0;
  std::uint32_t refreshes = 0;
  byte_blob payload;
  byte_blob marks;
  friend bool operator==(const sparse_rows& a, const sparse_rows& b) {
    return a.batch == b.batch && a.refreshes == b.refreshes && a.payload == b.payload &&
           a.marks == b.marks;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sparse_rows& x) {
  return f(caf::meta::type_name("sparse_rows"), x.batch, x.refreshes, x.payload, x.marks);
}

// How a thresholded push names its rows (sparse_grads::rows):
// - rows_keyed: by `keys` (model::row_key, or dynamic tables' (table, id)
//   pairs), the payload over [keys * dim];
// - rows_placed, rows_placed_all: by their place in the lookup of batch
//   `batch` that the same worker sent this shard last under that number
//   (`keys` empty), the payload over [that lookup's keys * dim]; the shard
//   applies the rows that carry an entry (rows_placed) or every row of the
//   lookup (rows_placed_all, dct.mp-drop-rows=false). A shard keeps each
//   worker's last few lookups for this (embedding_shard.hpp).
constexpr std::uint8_t rows_keyed = 0;
constexpr std::uint8_t rows_placed = 1;
constexpr std::uint8_t rows_placed_all = 2;

struct sparse_grads {
  std::uint64_t batch = 0; // placed: the batch whose lookup named the rows
  std::uint8_t rows = rows_keyed;
  key_blob keys;
  byte_blob payload; // [rows * dim] gradient entries, the unsent ones 0
  friend bool operator==(const sparse_grads& a, const sparse_grads& b) {
    return a.batch == b.batch && a.rows == b.rows && a.keys == b.keys && a.payload == b.payload;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sparse_grads& x) {
  return f(caf::meta::type_name("sparse_grads"), x.batch, x.rows, x.keys, x.payload);
}

} // namespace messages
