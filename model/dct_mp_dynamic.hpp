#pragma once
// dct.mp on dynamic tables (model.embedding=dynamic; model/dct_mp.hpp for
// the thresholds, model/dynamic_table.hpp for the tables). Pure math: the
// embedding shard and the worker carry what is here.
//
// A worker's per-row residual (straight pushes, error feedback) is its
// picture of what it still owes one row. With dynamic tables a row is an
// incarnation: an id may have no row (the shard reads zeros and drops its
// gradient), may be admitted later, or evicted and admitted again into a
// fresh row. A residual is only sound for the incarnation it was computed
// on, so the two ends keep these rules:
// - the shard (dct_row_seen) keeps per (table, slot) the set of workers
//   that have been served the slot's current row. An admission into the
//   slot (the only way a slot gets a new row; eviction and ttl release
//   slots) empties the set, so does a recovery (clear()).
// - each thresholded reply carries row marks (encode_row_marks): `absent`
//   for a row of an id without a row, `fresh` for a row the asking worker
//   had not been served since the row was admitted (then the worker is
//   added to the set).
// - the worker, at the push of that batch (pushes go in batch order, so a
//   push of an earlier batch has already kept its part): drops the residual
//   of every marked row; an absent row's gradient is zeroed (no row, no
//   update: it sends nothing and keeps nothing).
// So a residual never crosses from one incarnation into the next, nor
// gathers while an id has no row. What stays as on the dense path: a push
// already under way when its row is evicted and its id admitted again
// lands on the new row (dynamic_push finds rows by id).
// Cost: 1 bit per slot and worker at the shard; on the wire about a byte
// per marked row (a row's first lookup by each worker, and each lookup of
// an id without a row).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/dct_mp.hpp"
#include "model/dynamic_table.hpp"

namespace model {

class dct_row_seen {
public:
  explicit dct_row_seen(std::size_t num_tables) : bits_(num_tables) {}
  // Slot `slot` of table t took a new row: no worker has been served it.
  void admitted(std::size_t t, std::uint32_t slot);
  // Whether worker w (a small index, < 2^16) is served slot's row for the
  // first time since its admission; marks it served.
  bool first_look(std::size_t t, std::uint32_t slot, std::size_t w);
  // Every row counts as new to every worker (a recovered shard).
  void clear();
  std::size_t bytes() const;

private:
  void widen(std::size_t words);
  std::size_t words_ = 1;                       // 64-bit words per slot
  std::vector<std::vector<std::uint64_t>> bits_; // per table: [slots * words_]
};

// A reply's row marks over n rows: row i is absent (2i) or fresh (2i + 1).
struct row_marks {
  std::vector<std::uint32_t> marked; // increasing, each < 2n
  void clear() { marked.clear(); }
  void absent(std::uint32_t row) { marked.push_back(2 * row); }
  void fresh(std::uint32_t row) { marked.push_back(2 * row + 1); }
};

// The shard's training lookup of `id` in table t (tab.train_lookup at
// `now`); when it admits the id, the slot's set in `seen` is emptied.
std::uint32_t tracked_lookup(dynamic_table& tab, dct_row_seen& seen, std::size_t t,
                             std::uint64_t id, std::uint64_t now);
// The shard's half of a reply to worker w: out = the marks of its n rows,
// pairs [2n] (table, id), slots [n] (no_row: the id has no row); the fresh
// rows are marked served to w.
void mark_reply(dct_row_seen& seen, const std::uint64_t* pairs, const std::uint32_t* slots,
                std::size_t n, std::size_t w, row_marks& out);
// The worker's half, before a straight push of n rows named by pairs [2n]
// with marks [n] (0, mark_absent, mark_fresh): a marked row's residual is
// dropped (r may be null: no error feedback), an absent row's gradient in
// grads [n * dim] zeroed.
constexpr std::uint8_t mark_absent = 1, mark_fresh = 2;
void forget_marked(dct_row_residuals* r, const std::uint64_t* pairs, const std::uint8_t* marks,
                   std::size_t n, float* grads, std::size_t dim);

// Wire form, little-endian: a varint count, then the first mark and each
// gap to the one before less 1, as unsigned LEB128 varints (model/dct_codec
// uses the same for its deltas).
std::vector<std::uint8_t> encode_row_marks(const row_marks& m);
// Decodes marks over n rows; what is wrong otherwise (truncated, trailing
// bytes, a varint over 5 bytes or not canonical, a mark >= 2n).
std::optional<std::string> decode_row_marks(const std::uint8_t* bytes, std::size_t len,
                                            std::size_t n, row_marks& out);

} // namespace model
