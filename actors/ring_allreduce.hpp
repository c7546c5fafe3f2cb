#pragma once
// ring_allreduce: the state machine of one member of a chunked ring
// all-reduce (sum), without any actor code. The shadow syncer owns one, feeds
// it the ring_chunk messages from its previous ring member, and forwards the
// chunks it emits to its next member.
//
// Algorithm (N members, ranks 0..N-1, next = rank + 1 mod N). The buffer is
// split into N chunks with model::split_range. Step s of a round:
//   reduce-scatter, s = 0..N-2:  send chunk (rank - s) mod N,
//                                receive chunk (rank - s - 1) mod N and ADD it;
//   all-gather, s = N-1+t, t = 0..N-2: send chunk (rank + 1 - t) mod N,
//                                receive chunk (rank - t) mod N and COPY it.
// After the last step every member holds the element-wise sum of all the
// members' buffers. Each member sends 2(N-1) chunks, about 2(N-1)/N of the
// buffer, per round. N == 1 is the identity: begin() completes at once.
//
// Ordering: chunks may arrive for a step or round this member has not reached
// yet (a faster neighbour, or a round not begun here); they are stashed and
// applied in (round, step) order once it gets there. A chunk for an earlier
// step or round, a duplicate, or one with the wrong chunk index or size is a
// protocol violation and is reported as such.
//
// The stash is bounded: a correct neighbour cannot finish a round without this
// member's contribution, so it is at most one round ahead, and at most
// 2 * steps() chunks (this round's and the next one's) can be early. One more
// is a protocol violation (a peer that would otherwise grow memory without
// bound).
//
// Not thread safe: one actor drives it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>


#include "actors/ring_stash.hpp"
#include "messages/messages.hpp"
#include "model/sync_rules.hpp"

namespace actors {

class ring_allreduce {
public:
  // Called with every chunk to deliver to the next ring member, in order.
  using send_fn = std::function<void(messages::ring_chunk&&)>;

  // Precondition: n >= 1, rank < n. Chunks sent carry `generation` (the ring
  // membership they belong to); the owner drops chunks of other generations.
  ring_allreduce(std::uint32_t rank, std::uint32_t n, send_fn send, std::uint32_t generation = 0);

  // Begins round `round` (> every round begun before) on `size` floats at
  // `data`, which must stay valid and untouched by others until done(); on
  // completion data holds the sum. Sends the first chunk and replays stashed
  // chunks of this round. Returns a protocol violation found among them, if
  // any (empty string: none). Precondition: !active().
  std::string begin(std::uint64_t round, float* data, std::size_t size);

  // A chunk from the previous member. Returns an empty string when it was
  // applied or stashed, else a description of the protocol violation.
  std::string receive(messages::ring_chunk&& chunk);

  // A round has begun and not yet completed.
  bool active() const { return data_ != nullptr && !done_; }
  // The round begun last has completed (data holds the sum).
  bool done() const { return done_; }
  // The round begun last (0 before the first).
  std::uint64_t round() const { return round_; }
  // Payload bytes of all chunks sent so far.
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  // Chunks waiting for a step or round not reached yet.
  std::size_t stashed() const { return stash_.size(); }
  // The most chunks that may wait: two rounds' worth.
  std::size_t max_stashed() const { return max_early_chunks(n_); }
  // Two rounds of 2(n-1) chunks: the most a correct ring of n members can
  // send one member before it reaches them (also the syncer's bound before
  // its ring is formed, with n = every trainer).
  static std::size_t max_early_chunks(std::uint32_t n) { return 4 * std::size_t(n - 1); }

private:
  std::uint32_t steps() const { return 2 * (n_ - 1); }
  std::uint32_t send_chunk_index(std::uint32_t step) const;
  std::uint32_t recv_chunk_index(std::uint32_t step) const;
  void send_step();
  std::string apply(messages::ring_chunk&& chunk);
  std::string drain();

  std::uint32_t rank_, n_;
  send_fn send_;
  std::uint32_t generation_;
  std::uint64_t round_ = 0;
  std::uint32_t step_ = 0; // the step whose chunk is expected next
  float* data_ = nullptr;
  std::vector<model::range> chunks_;
  bool done_ = false;
  std::uint64_t bytes_sent_ = 0;
  ring_stash<messages::ring_chunk> stash_;
};

} // namespace actors
