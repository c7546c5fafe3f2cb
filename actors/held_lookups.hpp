#pragma once
// dct.mp-push-places at an embedding shard: each worker's last few
// thresholded lookups (batch number and keys), so that the batch's push may
// name its rows by their place in the lookup (messages::rows_placed) instead
// of by their 8-byte keys. A push comes once for a lookup, so taking the
// keys forgets them; a lookup whose push never comes (a worker stopped, a
// cut drained it) is forgotten when the worker's ninth newer one arrives. A
// lookup of a batch number already held (a lookup sent again) replaces it.
// Workers are numbers (embedding_shard_state::mp_worker). At most
// `max_senders` workers hold lookups at once: a new one past that makes the
// worker whose newest lookup is the oldest forget all of its own (one that
// stopped: a live worker's are never that old), so what a shard holds is
// bounded by max_senders x per_worker lookups whoever sends. No CAF.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace actors {

class held_lookups {
public:
  static constexpr std::size_t per_worker = 8;
  explicit held_lookups(std::size_t max_senders = 64) : max_senders_(max_senders) {}

  void hold(std::size_t worker, std::uint64_t batch, const std::vector<std::uint64_t>& keys);
  // Moves the keys of `worker`'s lookup of `batch` into `keys` and forgets
  // it; false (keys untouched) when none is held.
  bool take(std::size_t worker, std::uint64_t batch, std::vector<std::uint64_t>& keys);
  // Lookups held for `worker`.
  std::size_t held(std::size_t worker) const;
  // Workers holding at least one lookup.
  std::size_t senders() const { return senders_; }

private:
  struct entry {
    bool used = false;
    std::uint64_t batch = 0;
    std::uint64_t age = 0; // when it was held (the oldest goes first)
    std::vector<std::uint64_t> keys;
  };
  std::vector<std::array<entry, per_worker>> workers_;
  std::uint64_t clock_ = 0;
  std::size_t max_senders_;
  std::size_t senders_ = 0; // workers with a used entry
  void forget_stalest(std::size_t except);
};

} // namespace actors
