#pragma once
// Internals of hogwild_worker shared by its source files:
// hogwild_worker.cpp (the pipeline loop) and hogwild_worker_step.cpp (one
// batch's computation and updates). Not part of the actor's interface.
#include <cstddef>
#include <cstdint>
#include <string>

#include <caf/duration.hpp>
#include <caf/error.hpp>

#include "actors/cpu_time.hpp"
#include "actors/hogwild_worker.hpp"
#include "messages/errors.hpp"

namespace actors::worker_detail {

using self_ptr = worker_actor::stateful_pointer<worker_state>;
using clock_type = worker_state::clock_type;

// (thread_cpu_seconds, actors/cpu_time.hpp: what this worker's own host
// would spend, whatever else shares the scheduler thread.)

// Adds the thread CPU time of its scope to `total`; nested meters (train()
// runs inside on_batch's scope) count once, in the outermost one.
struct cpu_meter {
  static inline thread_local int depth = 0;
  double& total;
  double start;
  explicit cpu_meter(double& t) : total(t), start(depth++ == 0 ? thread_cpu_seconds() : 0.0) {}
  ~cpu_meter() {
    if (--depth == 0)
      total += thread_cpu_seconds() - start;
  }
};

// The dense optimiser's step on the replica, timed (stats.dense_step_cpu_seconds).
void dense_step(worker_state& st);

// One batch (hogwild_worker_step.cpp): forward and backward on the replica
// as it is now, the dense step (under the virtual clock: at the batch's end
// event), the pushes of its row gradients, the statistics.
void train(self_ptr self, const worker_batch& slot);
// Virtual clock: lands the dense step of the last batch, if still pending.
void apply_pending(self_ptr self);

// The timeout of a request: none under the watchdog (wall clock), else
// cfg.timeout.
caf::duration request_timeout(const worker_state& st);
// The watchdog's check (wall clock): fails the worker when a request has
// waited cfg.timeout; else arms the next tick.
void watchdog_tick(self_ptr self);

// The pipeline's one decision point, called after every event
// (hogwild_worker.cpp).
void advance(self_ptr self);

// Failures (hogwild_worker_lookup.cpp): logs `what` and quits with a project
// error, once. A failed request to `peer`: `down_code` is what a dead peer
// (or an error of another category) means; timeouts and project errors keep
// their own code.
void quit_with(self_ptr self, messages::errc code, std::string what);
void fail(self_ptr self, const std::string& peer, messages::errc down_code, const caf::error& err);
void fail(self_ptr self, const std::string& peer, messages::errc code, const std::string& what);

// Lookups (hogwild_worker_lookup.cpp): batch seq's request to shard s, and
// its reply, checked and stored, then advance. With cfg.shard_restarts a
// shard that went down is waited for: its lookups go again to the handle of
// on_rebind.
void send_lookup(self_ptr self, std::uint64_t seq, std::size_t s);
// Local rows: every shard's rows of the batch, gathered from its tables.
void gather_local(self_ptr self, worker_batch& slot);
void on_rows(self_ptr self, std::uint64_t seq, std::size_t s, messages::embedding_rows& r);
// dct.mp: the thresholded reply, decoded to rows (the unsent entries 0).
void on_sparse_rows(self_ptr self, std::uint64_t seq, std::size_t s, messages::sparse_rows& r);
void on_rebind(self_ptr self, std::uint32_t s, const caf::strong_actor_ptr& h);
// cfg.shard_restarts: monitors the shards; a DOWN of a shard's current
// handle sends the in-flight batch's lookup there to wait for the rebind.
void watch_shards(self_ptr self);

} // namespace actors::worker_detail
