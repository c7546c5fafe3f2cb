#pragma once
// Internals of embedding_shard: its side of a checkpoint cut (the protocol
// is in embedding_shard.hpp), and the push path both sides use. Not part of
// the actor's interface.
#include <cstdint>
#include <string>

#include "actors/embedding_shard.hpp"

namespace actors::shard_cut_detail {

using self_ptr = embedding_shard_actor::stateful_pointer<embedding_shard_state>;

// The coordinator's cut(id, folder, expected workers); rp gets the file.
void on_request(self_ptr self, std::uint64_t id, const std::string& folder,
                std::uint32_t expected,
                caf::typed_response_promise<messages::shard_cut_file> rp);
// The same over the listed workers only (a cut after a trainer's loss).
void on_request(self_ptr self, std::uint64_t id, const std::string& folder,
                const std::vector<std::string>& only,
                caf::typed_response_promise<messages::shard_cut_file> rp);
// A worker's marker for cut id (the current sender).
void on_marker(self_ptr self, std::uint64_t id);
// The coordinator gave cut id up (aborted).
void on_given_up(self_ptr self, std::uint64_t id);
// A worker's end (the current sender).
void on_end(self_ptr self);
// True when the push (of the current sender) waits for the alignment: it is
// then kept, applied later.
bool hold_push(self_ptr self, messages::embedding_grads& g);
// Applies a push, or drops a malformed one with a warning (embedding_shard.cpp).
void apply_push(self_ptr self, const messages::embedding_grads& g);
// The background writer's job for the shard's hashed tables into `folder`,
// or kept as an image (to_image: a multi-node cut's, for the fetch);
// on_finished is the caller's.
checkpoint::background_writer::job writer_job(const embedding_shard_state& st,
                                              const std::string& folder, bool to_image);
// The cut in progress aligned: its writer starts (embedding_shard_cut_write.cpp).
void start_writer(self_ptr self);
// Applies the pushes the cut in progress held, in order.
void apply_held(self_ptr self);
// The writer thread of cut id finished.
void on_written(self_ptr self, std::uint64_t id);
// A piece of the file kept at cut id (asked without a folder), from offset:
// each request asks for the offset after the last piece, 0 starts again;
// the image goes after the last piece.
caf::result<messages::file_chunk> on_fetch(self_ptr self, std::uint64_t id,
                                           std::uint64_t offset);

} // namespace actors::shard_cut_detail

// Its own CPR saves and the reload after a restart (embedding_shard_cpr.hpp).
namespace actors::shard_cpr_detail {

using self_ptr = shard_cut_detail::self_ptr;

// Sets up the policy's bookkeeping (cfg.cpr.folder set).
void init(self_ptr self);
// An applied push's rows count for the policy; arms the save timer.
void touched(self_ptr self, const messages::embedding_grads& g);
// The save timer.
void on_tick(self_ptr self);
// The background writer of the save in flight finished (wall clock).
void on_saved(self_ptr self);
// A restarted shard's reload: (bytes read, saves applied, newest save's ns,
// ready ns).
caf::result<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t> on_recover(self_ptr self);

} // namespace actors::shard_cpr_detail
