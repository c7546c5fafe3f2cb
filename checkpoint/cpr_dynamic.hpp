#pragma once
// A CPR shard's saves of dynamic embedding tables (model.embedding=dynamic
// with recovery.mode=partial; model/dynamic_table.hpp). Same folder, chain
// and commit as hashed tables' saves (cpr_files.hpp), another file kind:
//
//   NNNNNNNN.bin  kind "cpr-dynamic": attrs tables, max_rows (the shard's
//                 rows per table), dim, state_per_row, shard, num_shards,
//                 seq, full, rows (saved), live (ids held, partial saves),
//                 served (the lookups the shard had served: its clock, in
//                 batches), sketch_width,
//                 sketch_depth. Arrays, integers as raw little-endian bytes
//                 in float slots (packed_words.hpp):
//                   table_rows [tables]        uint32, rows saved per table
//                   ids, last  [2 rows] each   uint64, ascending id per table
//                   counts     [rows]          uint32, decayed use counts
//                   weights    [rows * dim], state [rows * state_per_row]
//                   live_rows  [tables]        uint32 (partial; full: zeros)
//                   live_ids   [2 live]        uint64: every id that held a
//                                              row at the save (partial)
//                   tables     [2 * 6 * tables] uint64: next ttl sweep,
//                              admissions, evictions, expired, lookups, missing
//                   sketch     [tables * depth * width / 2] uint16 counters
//                   additions  [2 tables]      uint64
//
// A full save holds every row with its id. A partial one holds the rows the
// policy chose (by slot: mfu counts updates per slot, ssu samples them; a
// slot's new id after an eviction inherits its count) and the list of every
// id held then, so a reload keeps exactly the ids of the newest save:
// the newest saved row of each such id, from the full save on. An id held at
// the save whose row no save of the chain holds (admitted since the full
// save and never chosen) is dropped, as are ids admitted after the newest
// save: they read zeros until admitted again. Every save carries the
// admission sketch and the counters, and the reload takes the newest's.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/cpr_files.hpp"
#include "model/dynamic_tables.hpp"

namespace checkpoint {

// One save's content, copied out of the shard's tables (the wall clock's
// background writer takes it to another thread).
struct cpr_dynamic_rows {
  bool full = false;
  std::uint64_t served = 0; // the shard's clock at the save (lookups served)
  std::vector<std::uint32_t> table_rows, counts;
  std::vector<std::uint64_t> ids, last;
  std::vector<float> weights, state;
  std::vector<std::uint32_t> live_rows;
  std::vector<std::uint64_t> live_ids;
  std::vector<std::uint64_t> stats, additions;
  std::vector<std::uint16_t> sketch;
  std::uint64_t sketch_width = 0, sketch_depth = 0;
};

// The save of `t` (shape.local_rows = its max_rows): every row when `slots`
// is null, else the rows in those flat slots table * max_rows + slot
// (ascending; a slot that holds no row now is skipped). An error when a slot
// is out of the shape.
std::optional<std::string> gather_cpr_dynamic(const cpr_shape& shape,
                                              const model::dynamic_tables& t,
                                              const std::vector<std::uint64_t>* slots,
                                              std::uint64_t served, cpr_dynamic_rows* out);

// Writes it as save `seq` and commits it (commit_cpr_save).
bool write_cpr_dynamic(const std::string& folder, const cpr_shape& shape, std::uint64_t seq,
                       std::int64_t at_ns, const cpr_dynamic_rows& rows, cpr_save_info* info,
                       std::string* err);

// Fills `t` (empty, as constructed, of `shape`) from the chain in `folder`
// and sets *served to the newest save's clock. No chain.json: nothing
// changes, no error. An error names the file at fault; `t` is then as given.
std::optional<std::string> load_cpr_dynamic_chain(const std::string& folder,
                                                  const cpr_shape& shape,
                                                  model::dynamic_tables& t,
                                                  std::uint64_t* served, cpr_loaded* out);

} // namespace checkpoint
