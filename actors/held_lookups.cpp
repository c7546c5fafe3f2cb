#include "actors/held_lookups.hpp"

#include <algorithm>

namespace actors {

void held_lookups::hold(std::size_t worker, std::uint64_t batch,
                        const std::vector<std::uint64_t>& keys) {
  if (worker >= workers_.size())
    workers_.resize(worker + 1);
  if (held(worker) == 0) { // a worker starts holding
    if (senders_ >= std::max<std::size_t>(max_senders_, 1))
      forget_stalest(worker);
    ++senders_;
  }
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
      if (held(worker) == 0)
        --senders_;
      return true;
    }
  return false;
}

void held_lookups::forget_stalest(std::size_t except) {
  std::size_t stalest = workers_.size();
  std::uint64_t newest_of_stalest = 0;
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    if (w == except || held(w) == 0)
      continue;
    std::uint64_t newest = 0;
    for (const auto& e : workers_[w])
      if (e.used)
        newest = std::max(newest, e.age);
    if (stalest == workers_.size() || newest < newest_of_stalest) {
      stalest = w;
      newest_of_stalest = newest;
    }
  }
  if (stalest == workers_.size())
    return;
  for (auto& e : workers_[stalest]) {
    e.used = false;
    std::vector<std::uint64_t>().swap(e.keys); // its memory too
  }
  --senders_;
}

std::size_t held_lookups::held(std::size_t worker) const {
  if (worker >= workers_.size())
    return 0;
  return std::size_t(std::count_if(workers_[worker].begin(), workers_[worker].end(),
                                   [](const entry& e) { return e.used; }));
}

} // namespace actors
