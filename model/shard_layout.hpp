#pragma once
// Row keys and the row -> embedding-shard layout: the one home of both rules.
//
// A row key names one row of one table: key = (table << 40) | row, with
// row < rows_per_table < 2^40. Keys sort by table, then row.
//
// Rows are dealt round-robin over E shards, the same in every table: shard
// s of E owns global row r iff r % E == s, and stores it as its local row
// r / E of the same table. Each shard holds local_rows(rows_per_table, E) =
// ceil(rows_per_table / E) local rows per table; on shards with
// s >= rows_per_table % E (when E does not divide rows_per_table) the last
// one is padding: global_row() of it is >= rows_per_table.
//
// Dynamic tables (model.embedding=dynamic) have no rows to deal: an id of
// any table lives at shard id_owner(id, E) = mix64(id) % E (its mixed bits,
// so consecutive ids spread). Workers route by it, shards check it, and
// checkpoints place rows by it (dynamic-S.bin holds shard S's ids).
//
// Every function here requires num_shards > 0. Used by the worker (which
// shard to ask), the shard (ownership, its local rows), checkpoint files
// (local row l of shard s is global row l * E + s) and evaluation.
#include <cstddef>
#include <cstdint>

#include "model/count_min_sketch.hpp" // mix64

namespace model {

constexpr unsigned row_key_shift = 40;
inline std::uint64_t row_key(std::size_t table, std::uint64_t row) {
  return (static_cast<std::uint64_t>(table) << row_key_shift) | row;
}
inline std::size_t key_table(std::uint64_t key) {
  return static_cast<std::size_t>(key >> row_key_shift);
}
inline std::uint64_t key_row(std::uint64_t key) {
  return key & ((std::uint64_t{1} << row_key_shift) - 1);
}

// The shard (0..num_shards-1) that owns global row `row` of any table.
inline std::uint64_t row_owner(std::uint64_t row, std::uint64_t num_shards) {
  return row % num_shards;
}
// The shard that owns a global row key.
inline std::uint64_t key_owner(std::uint64_t key, std::uint64_t num_shards) {
  return row_owner(key_row(key), num_shards);
}
// The local row, at its owner, of global row `row`.
inline std::uint64_t local_row(std::uint64_t row, std::uint64_t num_shards) {
  return row / num_shards;
}
// The global row of local row `local` of shard `shard` (the inverse of
// row_owner and local_row); >= rows_per_table for a padding row.
inline std::uint64_t global_row(std::uint64_t local, std::uint64_t shard,
                                std::uint64_t num_shards) {
  return local * num_shards + shard;
}
// Local rows per table at every shard, padding included:
// ceil(rows_per_table / num_shards).
inline std::uint64_t local_rows(std::uint64_t rows_per_table, std::uint64_t num_shards) {
  return (rows_per_table + num_shards - 1) / num_shards;
}
// The shard that owns a dynamic table's id (any table).
inline std::uint64_t id_owner(std::uint64_t id, std::uint64_t num_shards) {
  return mix64(id) % num_shards;
}
// The key, at its owner, of a global row key: same table, local row.
inline std::uint64_t shard_local_key(std::uint64_t key, std::uint64_t num_shards) {
  return row_key(key_table(key), local_row(key_row(key), num_shards));
}

} // namespace model
