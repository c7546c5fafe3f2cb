// The simulated hosts' ready jobs (see run_queues.hpp).
#include "sim/run_queues.hpp"

namespace runtime {

void run_queues::add_host(std::size_t h, std::size_t cores) {
  if (hosts_.size() <= h)
    hosts_.resize(h + 1);
  auto& q = hosts_[h];
  if (q.slot.size() < cores) {
    q.slot.resize(cores, nullptr);
    q.queue.resize(stealing_ ? cores : 1);
  }
}

void run_queues::added(std::size_t h) {
  ++hosts_[h].waiting;
  busy_.insert(h);
}

void run_queues::push_internal(std::size_t h, std::size_t core, job j) {
  if (stealing_)
    queue_of(h, core).push_front(j);
  else
    queue_of(h, core).push_back(j);
  added(h);
}

void run_queues::push_external(std::size_t h, job j) {
  auto& q = hosts_[h];
  const auto core = q.next_core++ % q.slot.size();
  queue_of(h, core).push_back(j);
  added(h);
}

void run_queues::push_later(std::size_t h, std::size_t core, job j) {
  queue_of(h, core).push_back(j);
  added(h);
}

void run_queues::continue_on(std::size_t h, std::size_t core, job j) {
  auto& slot = hosts_[h].slot[core];
  if (slot) // (one turn a core: the engine never continues two)
    queue_of(h, core).push_front(j);
  else
    slot = j;
  added(h);
}

bool run_queues::can_take(std::size_t h, std::size_t core, bool continuing) const {
  if (h >= hosts_.size() || hosts_[h].waiting == 0)
    return false;
  const auto& q = hosts_[h];
  if (q.slot[core] || continuing)
    return q.slot[core] != nullptr;
  if (!stealing_)
    return !q.queue[0].empty();
  for (const auto& d : q.queue)
    if (!d.empty())
      return true;
  return false;
}

run_queues::job run_queues::take(std::size_t h, std::size_t core) {
  if (!can_take(h, core))
    return nullptr;
  auto& q = hosts_[h];
  job j = nullptr;
  if (q.slot[core]) {
    j = q.slot[core];
    q.slot[core] = nullptr;
  } else if (auto& own = queue_of(h, core); !own.empty()) {
    j = own.front();
    own.pop_front();
  } else { // stealing: the oldest job of the next core after this one with work
    const auto n = q.queue.size();
    for (std::size_t i = 1; i < n && !j; ++i) {
      auto& victim = q.queue[(core + i) % n];
      if (!victim.empty()) {
        j = victim.back();
        victim.pop_back();
      }
    }
  }
  if (--q.waiting == 0)
    busy_.erase(h);
  return j;
}

} // namespace runtime
