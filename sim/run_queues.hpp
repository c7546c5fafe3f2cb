#pragma once
// The ready jobs of each simulated host's scheduler threads, kept as CAF
// 0.17's scheduler keeps them (sim.clock=virtual; virtual_time.hpp), so the
// virtual clock runs handlers in the order a real run of the same
// scheduler.policy does:
//
// - stealing (CAF's work-stealing policy, the default): each core (thread)
//   has a queue. A job made ready by a handler running on a core goes to
//   the front of that core's queue (CAF's internal enqueue prepends: the
//   receiver of a message runs next, on the sender's thread); a job made
//   ready from outside the host's threads (a timer, another node's message,
//   the coordinator) goes to the back of the next core's queue in turn
//   (central enqueue, round robin); an actor whose turn ended with messages
//   left goes to the back of its core's queue (resume_job_later). A core
//   takes its queue's head, else steals the oldest job (the tail) of
//   another core's queue. (CAF picks the victim at random; here the next
//   core after it with work, so a run stays a function of its inputs. The
//   project's idle polling steals at once: cluster/scheduler_setup.hpp.)
// - sharing: one queue per host; every job joins its back, a core takes its
//   head.
//
// A core also has a slot for the actor whose turn continues on it (its
// mailbox still held messages at its handler's end), taken before the queue.
// Pure bookkeeping: no clock, no actor system (the engine decides when a
// core is free and what a job's turn is).
#include <cstddef>
#include <deque>
#include <set>
#include <vector>

namespace caf {
class resumable;
}

namespace runtime {

class run_queues {
public:
  using job = caf::resumable*;

  explicit run_queues(bool stealing) : stealing_(stealing) {}

  // Makes room for host `h` with `cores` cores (idempotent).
  void add_host(std::size_t h, std::size_t cores);

  // Made ready by a handler running on `core` of host `h`.
  void push_internal(std::size_t h, std::size_t core, job j);
  // Made ready from outside the host's threads.
  void push_external(std::size_t h, job j);
  // Its turn ended with messages left (the turn's message budget spent).
  void push_later(std::size_t h, std::size_t core, job j);
  // Its turn continues on `core`: the core's next job, before its queue.
  void continue_on(std::size_t h, std::size_t core, job j);

  // Whether `core` of host `h` has a job to take (its slot, its queue or,
  // stealing, another core's queue); continuing: its slot only.
  bool can_take(std::size_t h, std::size_t core, bool continuing = false) const;
  // The job `core` of host `h` runs next, removed; null when none.
  job take(std::size_t h, std::size_t core);

  // Hosts with a job waiting (in a slot or a queue), in host order.
  const std::set<std::size_t>& hosts_with_work() const { return busy_; }

private:
  struct host_queues {
    std::vector<std::deque<job>> queue; // per core (stealing), else one
    std::vector<job> slot;              // per core: a turn that continues
    std::size_t next_core = 0;          // central enqueue's round robin
    std::size_t waiting = 0;            // jobs in slots and queues
  };
  std::deque<job>& queue_of(std::size_t h, std::size_t core) {
    return hosts_[h].queue[stealing_ ? core : 0];
  }
  void added(std::size_t h);

  bool stealing_;
  std::vector<host_queues> hosts_;
  std::set<std::size_t> busy_;
};

} // namespace runtime
