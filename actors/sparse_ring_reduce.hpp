#pragma once
// sparse_ring_reduce: the state machine of one member of a ring all-reduce
// of sparse vectors that re-thresholds its partial sums (DCT for MA and BMUF
// with dct.dp-ring=reduce; docs/dct.md), without any actor code. The shadow
// syncer owns one, feeds it the ring_sparse messages from its previous ring
// member and forwards what it emits to its next.
//
// The steps are ring_allreduce's (N members, the buffer in N chunks by
// model::split_range), on sparse payloads:
//   reduce-scatter, s = 0..N-2: take the largest entries of chunk
//       (rank - s) mod N of the member's accumulator (`take`, which removes
//       what it sends from the accumulator), send them; receive chunk
//       (rank - s - 1) mod N and ADD it to the accumulator;
//   then the member owns chunk (rank + 1) mod N: its accumulator holds its
//       own part plus the partial sum of every other member. It takes that
//       chunk's largest entries once more: the chunk's agreed sum;
//   all-gather, s = N-1+t, t = 0..N-2: send the agreed sum of chunk
//       (rank + 1 - t) mod N (its own at t = 0, then the one received at the
//       step before), receive chunk (rank - t) mod N's and keep it.
// Every member then holds the same N agreed chunks (the same bytes; the
// owner keeps the values it encoded). What a member did not pass on, its own
// entries and the partial sums it received, stays in its accumulator: the
// accumulators plus the agreed sums add up to the members' changes (each
// entry is either passed on or kept). Each member sends 2 (N - 1) payloads
// of about keep x size / N entries per round, whatever N is, where the
// all-gather of whole changes (sparse_allgather) sends N - 1 of keep x size.
//
// Ordering and bounds as in ring_allreduce: a payload for a step or round
// not reached yet is stashed (at most two rounds' worth, 4 (N - 1)); one of
// an earlier step or round, a duplicate, one for the wrong chunk, or one that
// does not decode to the chunk's size is a protocol violation, reported as
// such. N == 1: begin() takes the one chunk and completes at once.
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
#include "model/sync_rules.hpp"

namespace actors {

class sparse_ring_reduce {
public:
  using send_fn = std::function<void(messages::ring_sparse&&)>;
  // Takes from x (chunk `chunk`'s n entries of an accumulator) the entries
  // to send: out holds them (as they will cross the wire, rounded), and x
  // loses exactly those values.
  using take_fn =
    std::function<void(std::uint32_t chunk, float* x, std::size_t n, model::sparse_vector& out)>;

  // Precondition: n >= 1, rank < n.
  sparse_ring_reduce(std::uint32_t rank, std::uint32_t n, std::uint32_t size, send_fn send,
                     take_fn take, std::uint32_t generation = 0);

  // Begins round `round` (> every round begun before) on this member's
  // accumulator (size floats at acc, untouched by others until done()): its
  // change on entry, what it kept on completion. Sends the first payload and
  // replays stashed ones of this round; returns a protocol violation found
  // among them (empty: none).
  std::string begin(std::uint64_t round, float* acc);
  // A payload from the previous member: empty when applied or stashed, else
  // a description of the protocol violation.
  std::string receive(messages::ring_sparse&& piece);

  bool active() const { return acc_ != nullptr && !done_; }
  bool done() const { return done_; }
  std::uint64_t round() const { return round_; }
  // dst (size floats) += scale x every chunk's agreed sum. Pre: done().
  void add_sum(float* dst, float scale) const;
  // Entries this member received this round (partial sums and agreed sums).
  std::uint64_t received_values() const { return received_; }
  // Entries this member took to send this round (its partial sums and the
  // agreed sum of the chunk it owns).
  std::uint64_t taken_values() const { return taken_; }
  // Two rounds of 2 (N - 1) payloads: the most a correct ring can send one
  // member before it reaches them.
  static std::size_t max_early(std::uint32_t n) { return 4 * std::size_t(n - 1); }

private:
  std::uint32_t steps() const { return 2 * (n_ - 1); }
  std::uint32_t sent_chunk(std::uint32_t step) const;
  std::uint32_t received_chunk(std::uint32_t step) const { return (sent_chunk(step) + n_ - 1) % n_; }
  void send_taken(std::uint32_t step);
  std::string apply(messages::ring_sparse&& piece);
  std::string drain();

  std::uint32_t rank_, n_, size_;
  send_fn send_;
  take_fn take_;
  std::uint32_t generation_;
  std::vector<model::range> chunks_;
  std::uint64_t round_ = 0;
  std::uint32_t step_ = 0; // the step whose payload is expected next
  float* acc_ = nullptr;
  bool done_ = false;
  std::uint64_t received_ = 0, taken_ = 0;
  model::sparse_vector scratch_;
  std::vector<model::sparse_vector> agreed_; // per chunk, indices within the chunk
  ring_stash<messages::ring_sparse> stash_;
};

} // namespace actors
