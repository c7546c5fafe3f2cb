#pragma once
// The model's files in a checkpoint (array_file.hpp format):
//
//   embedding-S.bin  kind "embedding": embedding shard S of N. attrs tables,
//                    rows_per_table (of the whole table), dim, state_per_row,
//                    shard, num_shards, local_rows; arrays "weights"
//                    [tables * local_rows * dim] and "state" [tables *
//                    local_rows * state_per_row]. Local row l of table t is
//                    global row l * N + S. Sequential mode writes shard 0 of 1.
//   replica-T.bin    kind "replica": trainer T's dense parameters ("params")
//                    and its dense optimiser state ("state"), same length.
//   centre.bin       kind "centre": the EASGD centre ("params"), simulated
//                    cluster with s-easgd or fr-easgd only.
//   bmuf.bin         kind "bmuf": BMUF's block state, w_g ("global") and
//                    Delta ("momentum"), identical in every syncer; simulated
//                    cluster with s-bmuf or fr-bmuf only.
//
// Loading re-splits rows: load_embeddings() fills whole tables from any
// number of shard files, so the shard count may change between save and
// load. Every file's CRC32C is checked against the manifest as it is read.
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/file_image.hpp"
#include "checkpoint/store.hpp"
#include "model/embedding.hpp"

namespace checkpoint {

struct embedding_shard_view {
  const float* weights = nullptr; // [tables * local_rows * dim]
  const float* state = nullptr;   // [tables * local_rows * state_per_row]
  std::uint64_t tables = 0, rows_per_table = 0, dim = 0, state_per_row = 0;
  std::uint64_t shard = 0, num_shards = 1, local_rows = 0;
};

std::string embedding_file_name(std::uint64_t shard);
std::string replica_file_name(std::uint64_t trainer);

// Shard `shard` of `num_shards` held as `local` tables (local row l of table
// t is global row l * num_shards + shard; rows_per_table is the whole
// table's). One process's whole tables are shard 0 of 1.
embedding_shard_view shard_view(const model::embedding_tables& local, std::uint64_t rows_per_table,
                                std::uint64_t shard = 0, std::uint64_t num_shards = 1);

// The header of an embedding shard file.
file_header embedding_header(const embedding_shard_view& v);
// Writes FOLDER/embedding-S.bin (fsynced); its name, bytes and CRC32C in *info.
bool write_embedding_file(const std::string& folder, const embedding_shard_view& v,
                          file_info* info, std::string* err);
// The bytes write_embedding_file() would write, borrowed from v's arrays
// (checkpoint/file_image.hpp).
file_image embedding_image(const embedding_shard_view& v);
// The same into the folder being written, recorded for its manifest.
bool write_embedding_shard(folder_writer& w, const embedding_shard_view& v, std::string* err);
bool write_replica(folder_writer& w, std::uint64_t trainer, const float* params,
                   const float* state, std::size_t size, std::string* err);
// centre.bin, kind "centre": the EASGD centre variable ("params", size floats).
bool write_centre(folder_writer& w, const float* params, std::size_t size, std::string* err);
// The EASGD centre, when the checkpoint has one (else *found = false).
std::optional<std::string> load_centre(const opened_checkpoint& c, std::size_t size,
                                       std::vector<float>& out, bool* found);

// bmuf.bin, kind "bmuf": w_g ("global") and Delta ("momentum"), size floats each.
bool write_bmuf(folder_writer& w, const float* global, const float* momentum, std::size_t size,
                std::string* err);
// BMUF's block state, when the checkpoint has one (else *found = false).
std::optional<std::string> load_bmuf(const opened_checkpoint& c, std::size_t size,
                                     std::vector<float>& global, std::vector<float>& momentum,
                                     bool* found);

// Fills the whole tables `t` from the checkpoint's embedding files, whatever
// their shard count. The files must agree with `t`'s shape (tables, rows,
// dim, state per row) and together cover every row once.
std::optional<std::string> load_embeddings(const opened_checkpoint& c, model::embedding_tables& t);

// The dense replicas in the checkpoint, by trainer: params and state of
// `size` floats each.
struct replica_state {
  std::vector<float> params, state;
};
std::optional<std::string> load_replicas(const opened_checkpoint& c, std::size_t size,
                                         std::vector<replica_state>& out);
// Their element-wise average (summed, then scaled by 1/n, the order of the
// cluster's own average_replicas, so both give the same bits). Not empty.
replica_state average(const std::vector<replica_state>& reps);

} // namespace checkpoint
