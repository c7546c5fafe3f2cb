#pragma once
// DCT for the model-parallel traffic (dct.mp; DESIGN.md section 12; issue
// 13): the embedding rows a shard sends a worker (the activations that cross
// the network) and the row gradients the worker pushes back. Pure math: the
// actors carry the encoded vectors (model/dct_codec.hpp).
//
// Forward: the shard sends only the reply's entries with |x| >= tau_t, one
// tau per table t, re-estimated every `refresh` lookups that touch table t,
// from that table's entries in the reply (estimate_threshold: a strided
// sample, never a sort of the whole reply). The worker trains on the rows
// with the other entries 0: the hard threshold h(x) = x 1[|x| >= tau] is
// part of its forward pass.
// Backward, two ways (dct.mp-backward):
// - mask (the paper's): h's derivative is the same mask, so a push carries
//   only the gradient entries of the entries that were sent
//   (mask_gradients). That is the exact gradient of the thresholded forward
//   pass, not a truncation of the dense one: nothing is held back, so there
//   is no residual for error feedback to carry. But an entry that is never
//   sent gets no gradient, and with one row per key (no pooling) the rows
//   that start small (every row, at initialisation) can stay below tau.
// - straight (straight-through): the gradient of every entry of the rows
//   looked up, as if h were the identity, thresholded on its own (one tau
//   per table over the gradients, its own keep) with per-row error feedback
//   at the worker (dct_row_residuals): the unsent part of a row's gradient
//   is added to its next push of that row.
// An entry that is exactly 0.0f counts as not sent (the wire form carries
// nonzeros); at keep 1 that is the only difference from the dense path.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "model/dct_codec.hpp"
#include "model/dct_sync.hpp"

namespace model {

class dct_row_thresholds {
public:
  // seed: the sampling offsets (each table's threshold gets seed + t).
  dct_row_thresholds(std::size_t num_tables, double keep, std::uint64_t refresh,
                     std::uint64_t seed);
  // out = the entries of rows ([n * dim]: row i is key keys[i]'s, keys being
  // model::row_key values of tables < num_tables) with |x| >= tau of the
  // key's table; out.size = n * dim. Counts the refreshes it made.
  // words = 2: dynamic tables, keys[2i] is row i's table and keys[2i + 1]
  // its id.
  void encode(const std::uint64_t* keys, const float* rows, std::size_t n, std::size_t dim,
              sparse_vector& out, std::size_t words = 1);
  // Entries sent of the entries they were chosen from, and the estimates.
  const dct_counts& counts() const { return counts_; }
  // The threshold table t used last (0 before its first estimate).
  float tau(std::size_t t) const { return now_[t]; }

private:
  std::vector<dct_threshold> tau_;
  std::vector<float> now_;    // per table: its tau for this reply
  std::vector<char> present_; // per table: in this reply
  std::vector<float> sample_; // one table's entries of the reply (a refresh)
  dct_counts counts_;
};

class dct_row_residuals;

// A worker's straight-through push of one shard's rows: `grads` ([n * dim],
// row i for key i) plus each row's residual (residual null: no error
// feedback), thresholded per table by `tau` into `out`, its values rounded
// to halves when `half`; what was not sent becomes the rows' residuals.
// grads ends with the residuals added.
void threshold_row_push(dct_row_thresholds& tau, dct_row_residuals* residual,
                        const std::uint64_t* keys, float* grads, std::size_t n, std::size_t dim,
                        bool half, sparse_vector& out, std::size_t words = 1);

// out = grads[i] at the entries where rows[i] != 0 (what the forward pass
// received) and grads[i] != 0; out.size = n.
void mask_gradients(const float* rows, const float* grads, std::size_t n, sparse_vector& out);

// Drops the rows of v (over [keys.size() / words * dim]) that carry no
// entry, and their keys (`words` words a row: 1, or 2 for dynamic tables'
// (table, id) pairs), renumbering v's indices over the rows left (in
// order): a push then names only the rows it changes. A row-wise step of a
// zero gradient changes nothing, so the shard's tables end the same.
void drop_empty_rows(std::vector<std::uint64_t>& keys, sparse_vector& v, std::size_t dim,
                     std::size_t words = 1);

// Per-row error feedback of thresholded pushes (straight-through): what a
// worker did not send of each row's gradient, until its next push of that
// row. Memory: dim floats per row the worker holds a residual of. A row is
// named by `words` key words (1: a model::row_key; 2: dynamic tables'
// (table, id), model/dct_mp_dynamic.hpp says when such a residual goes).
class dct_row_residuals {
public:
  explicit dct_row_residuals(std::size_t dim, std::size_t words = 1)
      : dim_(dim), words_(words), block_floats_(std::max<std::size_t>(1, 65536 / dim) * dim) {}
  // g ([n * dim], row i for key i) += each key's residual.
  void add_to(const std::uint64_t* keys, float* g, std::size_t n);
  // Each key's residual = its row of g less what `sent` (over [n * dim],
  // values taken from g, perhaps rounded to halves) carried: nothing of a
  // sent f32 entry, a half's rounding error of a sent half one.
  void keep_unsent(const std::uint64_t* keys, const float* g, std::size_t n,
                   const sparse_vector& sent);
  // The two above as threshold_row_push calls them, each row looked up once:
  // add_held adds each key's residual to g as add_to does and remembers
  // where each row's residual is; keep_unsent_held is keep_unsent for the
  // same keys, n and g, with no other call between the two.
  void add_held(const std::uint64_t* keys, float* g, std::size_t n);
  void keep_unsent_held(const std::uint64_t* keys, const float* g, std::size_t n,
                        const sparse_vector& sent);
  // Forgets the residual of the row named at `key` (its words words), if
  // any; its floats are reused by the next new row.
  void drop(const std::uint64_t* key);
  // The residual of the row named at `key`, or null.
  const float* find(const std::uint64_t* key) const;
  std::size_t rows() const { return at_.size(); }
  // Keeps at most `rows` residuals (0: no bound): after each push the map
  // drops residuals not used lately (second chance: a row used since the
  // clock's hand last passed it is passed once more), so ids that a dynamic
  // table evicted and that never come back do not hold memory for ever.
  // A batch's own rows stay until its push has kept them.
  // Precondition: no residual held yet.
  void set_capacity(std::size_t rows);
  std::size_t capacity() const { return capacity_; }
  std::uint64_t evictions() const { return evictions_; }

private:
  struct name {
    std::uint64_t a, b;
    bool operator==(const name& o) const { return a == o.a && b == o.b; }
    template <class H>
    friend H AbslHashValue(H h, const name& n) {
      return H::combine(std::move(h), n.a, n.b);
    }
  };
  name name_at(const std::uint64_t* key) const { return {key[0], words_ == 2 ? key[1] : 0}; }
  float* slot(const std::uint64_t* key);
  // The residual at `offset` (a multiple of dim_ below used_).
  float* at(std::size_t offset) const {
    return blocks_[offset / block_floats_].get() + offset % block_floats_;
  }
  void touch(std::size_t offset);
  // Drops residuals until at most capacity_ are left (capacity_ > 0).
  void trim();
  std::size_t dim_, words_;
  // row -> offset of its residual (Abseil's open addressing: a node per row, as
  // std::unordered_map allocates, made the map as costly as the dense work)
  absl::flat_hash_map<name, std::size_t> at_;
  // The residuals, in blocks of whole rows that never move: one growing
  // vector copied the whole pool at each doubling and faulted in every page
  // of each new copy (a 2-trainer run's worker holds a residual of every row
  // it pushed: 13 % of the run's samples went to zeroing and copying it).
  std::size_t block_floats_;
  std::vector<std::unique_ptr<float[]>> blocks_;
  std::size_t used_ = 0;          // floats of the blocks handed out
  std::vector<std::size_t> free_; // offsets of dropped rows
  std::vector<std::size_t> held_; // add_held: each row's offset, or no_row
  // set_capacity: per slot (offset / dim_) its row's name and
  // state (free, live, live and used since the hand passed), the hand.
  enum : std::uint8_t { slot_free, slot_live, slot_used };
  std::vector<name> names_;
  std::vector<std::uint8_t> state_;
  std::size_t hand_ = 0, capacity_ = 0;
  std::uint64_t evictions_ = 0;
  static constexpr std::size_t no_row = ~std::size_t{0};
};

} // namespace model
