#pragma once
// What a peer may name, against the plan (DESIGN.md section 13, Resources):
// the checks every handler runs on an id, index, count or range from another
// actor before the value keys any state or sizes an allocation. Pure
// functions, no CAF actor code: the actors turn a refusal into a caf::error
// (errc::bad_request) and a log line naming the sender, and the messages
// fuzz target feeds them what it decodes.
//
// Each returns "" when the value is within the plan, else what was received
// and what was expected, e.g. "trainer 7, expected below 2 (cluster.trainers)".
#include <cstdint>
#include <string>

#include "messages/cut_messages.hpp"
#include "messages/messages.hpp"

namespace messages {

// An index into a set of `count` (trainers, shards, ring ranks): value < count.
// `what` names the value ("trainer"), `key` the plan's setting ("cluster.trainers").
std::string check_index(const char* what, std::uint64_t value, std::uint64_t count,
                        const char* key);

// A count that must not exceed the plan's: value <= most.
std::string check_count(const char* what, std::uint64_t value, std::uint64_t most,
                        const char* key);

// A DCT exchange at a dense shard owning [offset, ...) in a job of `trainers`:
// the range's offset and a trainer id of the job. (The payload's size is the
// decoder's to check against the range: model::decode.)
std::string check_sparse_range(const sparse_range& s, std::uint64_t offset,
                               std::uint32_t trainers);

// A ring generation in a job of `trainers`: each lost trainer re-forms the
// ring once, and a ring keeps at least one member, so generation < trainers.
std::string check_generation(std::uint32_t generation, std::uint32_t trainers);

// A re-form of the ring: its generation, and at most `trainers` survivors of
// which `rank` is one.
std::string check_reform(std::uint32_t generation, std::uint32_t rank, std::size_t survivors,
                         std::uint32_t trainers);

// A ring message's generation, and (for the ring all-reduce) its step and
// chunk within a ring of at most `trainers` members, or (DCT all-gather) its
// origin rank.
std::string check_ring_message(const ring_chunk& c, std::uint32_t trainers);
std::string check_ring_message(const ring_sparse& p, std::uint32_t trainers);

// A piece of a shard's model file answering a request for the bytes from
// `offset` of the file `name` (cluster/shard_fetch.hpp): that name and
// offset, at least one byte, none past the file's size, and the size the
// first piece gave (`size`; 0 while no piece has come).
std::string check_file_chunk(const file_chunk& c, const std::string& name, std::uint64_t offset,
                             std::uint64_t size);

} // namespace messages
