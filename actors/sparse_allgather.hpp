#pragma once
// sparse_allgather: the state machine of one member of a ring all-gather of
// sparse vectors (DCT for MA and BMUF, dct.dp; docs/dct.md), without any
// actor code. The shadow syncer owns one, feeds it the ring_sparse messages
// from its previous ring member and forwards what it emits to its next.
//
// Algorithm (N members, ranks 0..N-1, next = rank + 1 mod N). Each member's
// vector travels the ring once. At begin() a member sends its own vector;
// at step t = 0..N-2 it receives the vector of member (rank - 1 - t) mod N
// and forwards it unless the next member is that vector's origin
// (t = N - 2). After N - 1 receipts it holds all N vectors. add_sum() adds
// them in rank order, so every member computes the same sum to the bit.
// Each member sends N - 1 payloads per round: its own and N - 2 forwarded.
//
// Ordering and bounds as in ring_allreduce: a vector for a step or round not
// reached yet is stashed (at most two rounds' worth, 2 (N - 1)); a vector of
// an earlier step or round, a duplicate, one from the wrong origin, or one
// that does not decode to the agreed size is a protocol violation, reported
// as such. N == 1 is the identity: begin() completes at once.
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
#include "model/dct_codec.hpp"

namespace actors {

class sparse_allgather {
public:
  using send_fn = std::function<void(messages::ring_sparse&&)>;

  // Precondition: n >= 1, rank < n; every member's vector has `size` entries.
  sparse_allgather(std::uint32_t rank, std::uint32_t n, std::uint32_t size, send_fn send,
                   std::uint32_t generation = 0);

  // Begins round `round` (> every round begun before) with this member's
  // vector (own.size == size). Sends it and replays stashed vectors of this
  // round; returns a protocol violation found among them (empty: none).
  std::string begin(std::uint64_t round, const model::sparse_vector& own);
  // A vector from the previous member: empty when applied or stashed, else
  // a description of the protocol violation.
  std::string receive(messages::ring_sparse&& piece);

  bool active() const { return begun_ && !done_; }
  bool done() const { return done_; }
  std::uint64_t round() const { return round_; }
  // dst (size floats) += scale x every member's vector, in rank order.
  // Pre: done().
  void add_sum(float* dst, float scale) const;
  // Entries of the other members' vectors received this round.
  std::uint64_t received_values() const;
  // Two rounds of N - 1 vectors: the most a correct ring can send one
  // member before it reaches them.
  static std::size_t max_early(std::uint32_t n) { return 2 * std::size_t(n - 1); }

private:
  std::uint32_t origin_at(std::uint32_t step) const { return (rank_ + 2 * n_ - 1 - step) % n_; }
  std::string apply(messages::ring_sparse&& piece);
  std::string drain();

  std::uint32_t rank_, n_, size_;
  send_fn send_;
  std::uint32_t generation_;
  std::uint64_t round_ = 0;
  std::uint32_t step_ = 0; // the step whose vector is expected next
  bool begun_ = false, done_ = false;
  std::vector<model::sparse_vector> got_; // per origin
  ring_stash<messages::ring_sparse> stash_;
};

} // namespace actors
