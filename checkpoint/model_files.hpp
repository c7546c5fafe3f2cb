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
//
// Loading re-splits rows: load_embeddings() fills whole tables from any
// number of shard files, so the shard count may change between save and
// load. Every file's CRC32C is checked against the manifest as it is read.
#include <optional>
#include <string>
#include <vector>

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

// The header of an embedding shard file.
file_header embedding_header(const embedding_shard_view& v);
// Writes one embedding shard into the folder being written.
bool write_embedding_shard(folder_writer& w, const embedding_shard_view& v, std::string* err);
// The whole tables of one process as shard 0 of 1.
bool write_embedding_tables(folder_writer& w, const model::embedding_tables& t,
                            std::uint64_t num_tables, std::uint64_t rows_per_table,
                            std::string* err);
bool write_replica(folder_writer& w, std::uint64_t trainer, const float* params,
                   const float* state, std::size_t size, std::string* err);

// Fills `t` (num_tables x rows_per_table x dim, state_per_row as built) from
// the checkpoint's embedding files, whatever their shard count. The files
// must agree with `t`'s shape and together cover every row once.
std::optional<std::string> load_embeddings(const opened_checkpoint& c, model::embedding_tables& t,
                                           std::uint64_t num_tables, std::uint64_t rows_per_table);

// The dense replicas in the checkpoint, by trainer: params and state of
// `size` floats each.
struct replica_state {
  std::vector<float> params, state;
};
std::optional<std::string> load_replicas(const opened_checkpoint& c, std::size_t size,
                                         std::vector<replica_state>& out);

} // namespace checkpoint
