#pragma once
// A CPR shard's own checkpoints on disk (DESIGN.md section 11): each
// embedding shard saves on its own, at its own interval, into its folder
// (CHECKPOINT_DIR/cpr/embedding-S/):
//
//   chain.json        the commit point, written atomically: the saves from the
//                     newest full one on, in order, each with its file, kind,
//                     rows, bytes, CRC32C and the time it was taken
//   NNNNNNNN.bin      one save, an array file (array_file.hpp) of kind "cpr":
//                     attrs tables, local_rows, dim, state_per_row, shard,
//                     num_shards, seq, full; a full save holds arrays
//                     "weights" [tables * local_rows * dim] and "state"
//                     [... * state_per_row]; a partial one first "rows"
//                     (the flat local row indices, uint64 little-endian,
//                     two 4-byte words each), then the rows' weights and state
//
// A save writes its file (fsynced), then the new chain.json; a full save then
// removes the files the chain no longer names. A save that fails (a full
// disk) removes its file: the chain and the folder are as before it. Loading applies the newest full
// save and every partial save after it, in order, checking each file's size,
// CRC32C, shape and row indices; an error names the file.
//
// Rows are the shard's flat local rows: row t * local_rows + l is local row l
// of table t (actors/embedding_shard.hpp).
// Dynamic tables' saves share the folder and the chain, as another file
// kind (cpr_dynamic.hpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace checkpoint {

struct cpr_shape {
  std::uint64_t tables = 0, local_rows = 0, dim = 0, state_per_row = 0;
  std::uint64_t shard = 0, num_shards = 1;
  std::uint64_t rows() const { return tables * local_rows; }
};

struct cpr_save_info {
  std::uint64_t seq = 0;
  std::string file;
  bool full = false;
  std::uint64_t rows = 0;   // rows written
  std::uint64_t bytes = 0;  // the file's
  std::uint32_t crc32c = 0;
  std::int64_t at_ns = 0;   // when it was taken, on the caller's clock
};

// "embedding-S"
std::string cpr_folder_name(std::uint64_t shard);

// Writes save `seq` into `folder` (created if missing, and locked for this
// process: dir_lock.hpp; another live process's folder is refused): every row when
// `rows` is null, else those rows (ascending, each < shape.rows()). weights
// and state are the shard's whole flat arrays. Then commits it to
// chain.json. *info gets what was written.
bool write_cpr_save(const std::string& folder, const cpr_shape& shape, std::uint64_t seq,
                    std::int64_t at_ns, const float* weights, const float* state,
                    const std::vector<std::uint64_t>* rows, cpr_save_info* info,
                    std::string* err);

// A save's rows copied out of the shard's arrays, for a writer on another
// thread while the shard goes on (the wall clock's background CPR saves).
struct cpr_rows {
  bool full = false;                 // every row (rows is then empty)
  std::vector<std::uint64_t> rows;   // else these, ascending
  std::vector<float> weights, state; // the rows' own, in order
};

// The rows (null: every row) each < shape.rows(), or what is wrong.
std::optional<std::string> check_rows(const cpr_shape& shape,
                                      const std::vector<std::uint64_t>* rows);
// Copies a save's rows (null: every row) out of the shard's whole flat
// arrays into *out; an error when a row is out of the shape.
std::optional<std::string> gather_cpr_rows(const cpr_shape& shape, const float* weights,
                                           const float* state,
                                           const std::vector<std::uint64_t>* rows,
                                           cpr_rows* out);
// write_cpr_save of rows gathered before: the same file, the same chain.
bool write_cpr_rows(const std::string& folder, const cpr_shape& shape, std::uint64_t seq,
                    std::int64_t at_ns, const cpr_rows& rows, cpr_save_info* info,
                    std::string* err);

class file_sink;

// The commit of one save, whatever its content (write_cpr_save's, and a
// dynamic table's, cpr_dynamic.hpp): writes FOLDER/save_name(s.seq) with
// `write` (its header and arrays), fsyncs it and commits it to chain.json.
// A full save (s.full) replaces the chain and removes its files; a partial
// one extends it, and needs one. On failure the folder is as before. *info
// gets s with the file's name, bytes and CRC32C.
bool commit_cpr_save(const std::string& folder, const cpr_shape& shape, cpr_save_info s,
                     const std::function<bool(file_sink&, std::string*)>& write,
                     cpr_save_info* info, std::string* err);

struct cpr_loaded {
  std::vector<cpr_save_info> saves; // applied, oldest first (empty: no chain yet)
  std::uint64_t bytes = 0;          // read
  std::int64_t newest_at_ns = 0;    // the newest save's time
  std::uint64_t next_seq = 0;       // for the next save
};

// Applies the chain in `folder` to weights/state (the shard's whole flat
// arrays, of `shape`). No chain.json: nothing applied, no error (the shard
// failed before its first save). An error names the file at fault.
std::optional<std::string> load_cpr_chain(const std::string& folder, const cpr_shape& shape,
                                          float* weights, float* state, cpr_loaded* out);

} // namespace checkpoint
