#pragma once
// An embedding shard's model file in a multi-node export: the coordinator
// asks the shard for the file in pieces over the wire (save(offset) ->
// file_chunk; actors/embedding_shard_export.cpp) and writes them into the
// checkpoint folder it is writing, so the file lands where the coordinator
// runs, byte for byte what the shard's own save(FOLDER) writes in one
// process (the same image: checkpoint/file_image.hpp).
//   coordinator -> shard: save(0) -> piece 0; save(offset of the next) -> ...
// Every piece is checked before it is written (messages::check_file_chunk:
// the expected name, the offset asked for, at least one byte, none past the
// size the first piece gave), then the CRC32C of the bytes written so far
// against the piece's; the file is fsynced (checkpoint/file_io.hpp) and
// recorded in the folder's manifest.
//
// Runs on the coordinator's own blocking thread (a scoped actor), not on a
// scheduler thread: the disk writes wait there, the shard only copies bytes.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/blocking_actor.hpp>

#include "actors/interfaces.hpp"
#include "checkpoint/store.hpp"

namespace runtime {

// Writes w.path(name) from `shard`'s pieces and records it in w. Each
// request has `timeout`. Without `cut`, the file of the tables as they are
// (save(offset)); with it, the file the shard kept at cut N (cut(N, offset),
// actors/embedding_shard_cut.hpp). *got (if given): the file written, as
// recorded in w. Error: "NAME: <why>" (a timeout, the
// shard's error, a piece refused, a CRC mismatch, an I/O error); the partial
// file stays in the temporary folder, which the caller abandons.
std::optional<std::string> fetch_shard_file(caf::blocking_actor* self,
                                            const actors::embedding_shard_actor& shard,
                                            const std::string& name,
                                            std::chrono::milliseconds timeout,
                                            checkpoint::folder_writer& w,
                                            std::optional<std::uint64_t> cut = std::nullopt,
                                            checkpoint::file_info* got = nullptr);

// A multi-node cut's files (cut_run.cpp), everything held by value: the
// fetching thread may outlive the cut's coordinator when the run ends while
// it fetches (a node lost). `cancelled` (set by the cut when it ends first)
// stops it before the next file.
struct cut_fetch_job {
  std::uint64_t cut = 0;
  std::vector<actors::embedding_shard_actor> shards;
  std::vector<std::string> shard_names;
  std::vector<checkpoint::file_info> files; // per shard: what its cut answered
  std::chrono::milliseconds timeout{0};
  std::atomic<bool> cancelled{false};
};

// Every shard's cut file into w, in shard order, each checked against the
// shard's answer (size and CRC32C). Error: "checkpoint: cut N: fetching NAME
// from SHARD: <why>", or "checkpoint: cut N: cancelled" once `cancelled`.
std::optional<std::string> fetch_cut_files(caf::blocking_actor* self, const cut_fetch_job& job,
                                           checkpoint::folder_writer& w);

} // namespace runtime
