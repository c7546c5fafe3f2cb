#pragma once
// hogwild_rows: one embedding shard's tables, read and written directly by
// the Hogwild workers of the same process (cluster.local-rows), without
// lookup and push messages.
//
// The shard still owns its tables and serves everything else (evaluation's
// dump, saves); at its initialisation it attaches them here. The runtime
// hands the same hogwild_rows to the shard and to every worker, and starts
// the workers only after every shard has answered (cluster/coordinator.cpp's
// readiness lookup), so a worker never sees an unattached one.
//
// A worker gathers its batch's unique rows of this shard (as a lookup reply
// would carry them) and, after its computation, applies their summed
// gradients with the shard's sparse optimiser (as the shard does with a
// push). Workers do both concurrently and WITHOUT locks: Hogwild on the
// embedding rows, as actors::hogwild_replica is on the dense replica (its
// header explains why such races are tolerated). Every access to the shared
// floats goes through a member of this class, so the ThreadSanitizer build
// suppresses exactly these with `race:actors::hogwild_rows::`
// (tests/tsan.supp).
//
// Keys are global row keys this shard owns (key_row % num_shards == shard):
// worker_batch splits a batch's keys that way, so they are not checked
// again here (a message from another process is; this is not one).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "model/embedding.hpp"
#include "model/optimizer.hpp"

namespace actors {

class hogwild_rows {
public:
  hogwild_rows(std::uint32_t num_shards, model::sparse_optimizer opt)
    : num_shards_(num_shards), opt_(opt) {}

  // The shard's initialised tables (its init, once).
  void attach(std::shared_ptr<model::embedding_tables> t) { tables_ = std::move(t); }
  bool attached() const { return tables_ != nullptr; }

  // model::embedding_tables' sharded gather and apply (the same entries: i
  // at j = at[i], or i when `at` is null), with the shard's optimiser. (A
  // worker's batch passes its unique keys and the positions of this shard's:
  // the rows land where the model reads them, with no reply to copy.)
  void gather(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n, float* out) const;
  void apply(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n, const float* grads);

private:
  std::uint32_t num_shards_;
  model::sparse_optimizer opt_;
  std::shared_ptr<model::embedding_tables> tables_;
};

using rows_ptr = std::shared_ptr<hogwild_rows>;

} // namespace actors
