#pragma once
// Internals of embedding_shard: the export save(FOLDER) (the protocol is in
// embedding_shard.hpp). Not part of the actor's interface.
#include <cstdint>
#include <string>

#include "actors/embedding_shard_cut.hpp"

namespace actors::shard_save_detail {

using self_ptr = shard_cut_detail::self_ptr;
using save_result = caf::result<std::string, std::uint64_t, std::uint32_t>;

// The request save(folder): the file of the rows as they are now, written
// off the handler (actors/off_handler.hpp); on_saved delivers the promise
// returned (on the discrete-event engine before this returns).
save_result on_save(self_ptr self, const std::string& folder);
// The writer thread of save id finished: join it, reply the file or the
// error (io_error naming the shard and the file).
void on_saved(self_ptr self, std::uint64_t id);
// The shard stops (its state's destructor) with saves in flight: each
// writer ends and its requester gets the file or the error, instead of a
// promise dropped unanswered (CAF 0.17 tells the requester nothing).
void answer_on_exit(embedding_shard_state& st);
// Waits for every hashed save's writer (before the tables change other
// than by a push, e.g. a CPR reload); their replies still go from on_saved.
void wait_writers(self_ptr self);

} // namespace actors::shard_save_detail
