#include "actors/held_lookups.hpp"

#include <algorithm>

namespace actors {

void held_lookups::hold(std::size_t worker, std::uint64_t batch,
                        const std::vector<std::uint64_t>& keys) {
  if (worker >= workers_.size())
    workers_.resize(worker + 1);
  auto& es = workers_[worker];
  entry* at = nullptr;
  for (auto& e : es)
    if (e.used && e.batch == batch)
      at = &e; // sent again: the newer lookup is the one its push names
  if (!at)
    at = &*std::min_element(es.begin(), es.end(), [](const entry& a, const entry& b) {
      return a.used != b.used ? !a.used : a.age < b.age; // a free entry, else the oldest
    });
  at->used = true;
  at->batch = batch;
  at->age = ++clock_;
  at->keys.assign(keys.begin(), keys.end()); // the entry's capacity is reused
}

bool held_lookups::take(std::size_t worker, std::uint64_t batch,
                        std::vector<std::uint64_t>& keys) {
  if (worker >= workers_.size())
    return false;
  for (auto& e : workers_[worker])
    if (e.used && e.batch == batch) {
      e.used = false;
      keys.swap(e.keys);
      return true;
    }
  return false;
}

std::size_t held_lookups::held(std::size_t worker) const {
  if (worker >= workers_.size())
    return 0;
  return std::size_t(std::count_if(workers_[worker].begin(), workers_[worker].end(),
                                   [](const entry& e) { return e.used; }));
}

} // namespace actors
