#pragma once
// The messages a ring member receives before it reaches their step
// (ring_allreduce, sparse_allgather, sparse_ring_reduce): kept by (round,
// step), at most `bound` of them (a correct neighbour is at most a round
// ahead; more is a peer that would grow memory without end), and replayed
// in order once the member gets there. Not thread safe: one actor drives it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace actors {

template <class Msg>
class ring_stash {
public:
  explicit ring_stash(std::size_t bound) : bound_(bound) {}

  // Keeps m for (round, step); else what is wrong, naming it by `what`:
  // one past the bound, or a second message for the same step.
  std::string keep(std::uint64_t round, std::uint32_t step, Msg&& m, const std::string& what) {
    if (held_.size() >= bound_)
      return what + " would be early message " + std::to_string(held_.size() + 1) +
             ", more than two rounds ahead allow (" + std::to_string(bound_) + ")";
    if (!held_.emplace(std::make_pair(round, step), std::move(m)).second)
      return "duplicate " + what;
    return {};
  }

  // While active(), takes the message kept for (round, step()) and passes it
  // to apply (which returns a protocol violation, or empty); stops at the
  // first step with none. Returns the violation, or empty.
  template <class Active, class Step, class Apply>
  std::string drain(std::uint64_t round, Active active, Step step, Apply apply) {
    while (active()) {
      auto i = held_.find(std::make_pair(round, step()));
      if (i == held_.end())
        return {};
      auto m = std::move(i->second);
      held_.erase(i);
      if (auto err = apply(std::move(m)); !err.empty())
        return err;
    }
    return {};
  }

  std::size_t size() const { return held_.size(); }
  std::size_t bound() const { return bound_; }

private:
  std::size_t bound_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, Msg> held_;
};

} // namespace actors
