#pragma once
// Dynamic embedding tables (model.embedding=dynamic, DESIGN.md section 16):
// per table a map from the 64-bit id (the raw value's hash, no modulo) to a
// row, so ids never share a row.
//
// Admission: an id gets a row at its admit_after-th occurrence in training,
// counted in a count_min_sketch (model/count_min_sketch.hpp) of
// next_pow2(max_rows) x 4 counters, so rare ids cost 8 bytes of counters per
// row of the table, not a row. admit_after = 1: at first sight (no sketch).
// Eviction: a table holds at most max_rows rows. When an id is due and the
// table is full, the max(1, max_rows / 32) rows with the lowest use count
// (ties: longest unseen, then lowest id) among those not used by the current
// batch make room, and then every row's count is halved (the decay: a count
// weighs recent use more). With ttl > 0, rows unseen for more than ttl
// examples are evicted by expire(), which the trainer calls before each
// batch and which sweeps every max(1, ttl / 8) examples.
// A new row's values come from (seed, table, id) alone (uniform in
// +-sqrt(1 / init_rows or max_rows), as hashed tables use sqrt(1 / rows)), its optimiser
// state is zero: which slot it lands in changes no bit.
// An id without a row reads a zero vector and receives no update; lookups
// of such ids are counted.
//
// Thread safety: none inside; one owner mutates a table. In sequential mode
// that is the engine's one thread. In the simulated cluster it is the
// embedding shard actor that owns the table's ids (actors/embedding_shard.hpp):
// the Hogwild workers of every trainer reach it only by lookup and push
// messages, which the actor handles one at a time, so no two threads ever
// touch a table at once (a row may change between a worker's lookup and its
// push, or be evicted: the push then finds no row and is dropped). Direct
// shared access (cluster.local-rows) is refused for dynamic tables
// (config/embedding_config.cpp): the map (Abseil's flat_hash_map) moves its
// entries when it grows, so a concurrent reader would need the owner's lock
// or a message. That rule lives here.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "model/count_min_sketch.hpp"

namespace model {

struct dynamic_settings {
  std::uint64_t admit_after = 1; // occurrences in training before an id gets a row
  std::uint64_t max_rows = 100000; // rows per table
  std::uint64_t ttl = 0;           // examples unseen before a row is evicted; 0 = never
  // The rows of the whole table, for new rows' bound sqrt(1 / init_rows);
  // 0 = max_rows. A cluster's shard holds a share of max_rows and sets the
  // whole, so an id's first row is the same on any shard count.
  std::uint64_t init_rows = 0;
};

struct dynamic_stats {
  std::uint64_t admissions = 0, evictions = 0, expired = 0; // expired: by ttl (in evictions)
  std::uint64_t lookups = 0, missing = 0; // training lookups; of them, of ids without a row
};

class dynamic_table {
public:
  static constexpr std::uint32_t no_row = 0xFFFFFFFFu;

  // table: its index (seeds the rows' initial values with seed).
  dynamic_table(const dynamic_settings& s, std::size_t dim, std::size_t state_per_row,
                std::uint64_t seed, std::size_t table);

  // Training: the slot of id, admitting it when due (and evicting to make
  // room); marks it used at `now` (examples trained before this batch).
  // no_row: the id has no row (not admitted yet, or the table is full of
  // rows this batch uses). Counts the lookup.
  std::uint32_t train_lookup(std::uint64_t id, std::uint64_t now);
  // Evaluation and predict: the slot or no_row; changes nothing.
  std::uint32_t find(std::uint64_t id) const {
    const auto it = slots_.find(id);
    return it == slots_.end() ? no_row : it->second;
  }
  // Evicts the rows unseen for more than ttl examples (sweeping every
  // max(1, ttl / 8) examples); nothing when ttl is 0.
  void expire(std::uint64_t now);

  float* row(std::uint32_t slot) { return weights_.data() + std::size_t(slot) * dim_; }
  const float* row(std::uint32_t slot) const { return weights_.data() + std::size_t(slot) * dim_; }
  float* accumulator(std::uint32_t slot) { return accum_.data() + std::size_t(slot) * state_; }
  const float* accumulator(std::uint32_t slot) const {
    return accum_.data() + std::size_t(slot) * state_;
  }

  std::size_t rows() const { return slots_.size(); }
  const dynamic_stats& stats() const { return stats_; }
  std::size_t dim() const { return dim_; }
  // Bytes held: rows and state as used, the map's slots, the sketch.
  std::size_t bytes() const;

  // Checkpoints: every row as (id, use count, last use, weights, state), in
  // ascending id order; restore() rebuilds the table from such rows (any
  // number, at most max_rows) and the sketch's state.
  struct saved_row {
    std::uint64_t id, last;
    std::uint32_t count;
  };
  std::vector<saved_row> saved_rows() const; // ascending id
  std::uint32_t slot_of(std::uint64_t id) const { return find(id); }
  // Slots are the rows' places, below max_rows (a released slot is reused
  // by a later id). Whether slot s holds a row now, and that row's entry.
  bool holds(std::uint32_t s) const { return s < ids_.size() && find(ids_[s]) == s; }
  saved_row saved_at(std::uint32_t s) const { return {ids_[s], last_[s], count_[s]}; }
  void insert_row(const saved_row& r, const float* weights, const float* state);
  count_min_sketch& sketch() { return sketch_; }
  const count_min_sketch& sketch() const { return sketch_; }
  dynamic_stats& mutable_stats() { return stats_; }
  std::uint64_t next_expiry() const { return next_expiry_; }
  void set_next_expiry(std::uint64_t n) { next_expiry_ = n; }

private:
  std::uint32_t admit(std::uint64_t id, std::uint64_t now);
  void evict_some(std::uint64_t now);
  void release(std::uint32_t slot);
  std::uint32_t new_slot();

  dynamic_settings s_;
  std::size_t dim_, state_;
  std::uint64_t seed_;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> slots_; // id -> slot
  std::vector<std::uint64_t> ids_, last_;                    // per slot
  std::vector<std::uint32_t> count_;                         // per slot: decayed use count
  std::vector<std::uint32_t> free_;                          // released slots, reused first
  std::vector<float> weights_, accum_;                       // [slots, dim], [slots, state]
  count_min_sketch sketch_;
  dynamic_stats stats_;
  std::uint64_t next_expiry_ = 0;
};

} // namespace model
