#pragma once
// Dynamic embedding tables in a checkpoint (model.embedding=dynamic;
// model/dynamic_table.hpp), array_file.hpp format:
//
//   dynamic-S.bin  kind "dynamic": the rows whose id falls on shard S of N
//                  (dynamic_owner). attrs tables, dim, state_per_row,
//                  max_rows, shard, num_shards, rows (in this file, all
//                  tables), sketch_width and sketch_depth (0: this file holds
//                  no sketch), own_shard (1, present only then: the sketch
//                  and counters are shard S's own, sized by its share of
//                  max_rows). Arrays; integers are stored as their raw
//                  little-endian bytes in float slots:
//                    table_rows [tables]          uint32, rows per table
//                    ids        [2 rows]          uint64, ascending per table
//                    last       [2 rows]          uint64, example count at last use
//                    counts     [rows]            uint32, decayed use counts
//                    weights    [rows * dim]
//                    state      [rows * state_per_row]
//                    tables     [2 * 6 * tables]  uint64 per table: next ttl
//                               sweep, admissions, evictions, expired,
//                               lookups, missing
//                    sketch     [tables * depth * width / 2]  uint16 counters
//                    additions  [2 tables]        uint64, since the last halving
// Loading places every row by id into the tables, whatever N was: the shard
// count may change between save and load. The model-wide sketches and
// counters of all files are summed (a one-process run writes them into shard
// 0's file only); a shard's own (a simulated cluster's or a node's) go back
// to the same shard of as many shards only.
#include <optional>
#include <string>

#include "checkpoint/file_image.hpp"
#include "checkpoint/store.hpp"
#include "model/dynamic_tables.hpp"

namespace checkpoint {

// The shard of num_shards that holds id (by its mixed bits, so consecutive
// ids spread).
std::uint64_t dynamic_owner(std::uint64_t id, std::uint64_t num_shards);

std::string dynamic_file_name(std::uint64_t shard);

// What a dynamic-S.bin holds beside its rows.
enum class dynamic_counters {
  none,      // the rows alone
  model,     // the whole model's counters and sketches (write_dynamic_tables' shard 0)
  own_shard, // an embedding shard's tables: their own counters and sketches
};

// A shard's own counters and sketches (dynamic_counters::own_shard), read
// back from its file, per table in table order.
struct shard_counters {
  std::uint64_t shard = 0, num_shards = 0, width = 0, depth = 0;
  std::vector<std::uint64_t> stats; // 6 per table: next ttl sweep, admissions,
                                    // evictions, expired, lookups, missing
  std::vector<std::uint16_t> sketch;   // width x depth per table
  std::vector<std::uint64_t> additions; // one per table
};

// The tables' counters and sketches, as shard s of num_shards's own.
shard_counters counters_of(const model::dynamic_tables& t, std::uint64_t s,
                           std::uint64_t num_shards);
// Sets the tables' counters and sketches to k's (a shard's resume); an
// error, and nothing set, when k's sketch size or table count differs.
std::optional<std::string> set_counters(model::dynamic_tables& t, const shard_counters& k);

// Writes the tables as num_shards files dynamic-S.bin into the folder
// being written (each recorded for the manifest); the sketches and counters
// go into shard 0's file.
bool write_dynamic_tables(folder_writer& w, const model::dynamic_tables& t,
                          std::uint64_t num_shards, std::string* err);

// Writes the rows of `t` whose id falls on shard s of num_shards as the file
// `path` (named dynamic_file_name(s) in *info), with the tables' counters
// and sketches as `counters` says (none: sketch_width 0). An embedding shard
// writes its own tables this way with own_shard.
bool write_dynamic_file(const std::string& path, const model::dynamic_tables& t,
                        std::uint64_t s, std::uint64_t num_shards, dynamic_counters counters,
                        file_info* info, std::string* err);

// The bytes write_dynamic_file() would write, as an image owning a copy of
// the rows (checkpoint/file_image.hpp).
file_image dynamic_image(const model::dynamic_tables& t, std::uint64_t s,
                         std::uint64_t num_shards, dynamic_counters counters);

// Fills `t` (empty, as constructed) from every dynamic-S.bin of the
// checkpoint. The files must agree with t's shape (tables, dim, state per
// row, sketch); a table may not hold more than its max_rows; an id may not
// appear twice. A shard's own counters and sketches go to *own, when given,
// else they are left out (the model's sketch has another size).
std::optional<std::string> load_dynamic_tables(const opened_checkpoint& c, model::dynamic_tables& t,
                                               std::vector<shard_counters>* own = nullptr);

} // namespace checkpoint
