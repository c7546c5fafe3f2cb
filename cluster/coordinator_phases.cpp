// The coordinator's protocol as a state machine (see coordinator_phases.hpp).
#include "cluster/coordinator_phases.hpp"

#include <algorithm>
#include <cstdio>

#include "model/check.hpp"

namespace runtime {

const char* to_string(coordinator_phase p) {
  static const char* const names[] = {"idle",   "wire", "shards", "train", "drain",
                                      "rounds", "stop", "report", "done"};
  return names[static_cast<int>(p)];
}

bool asks_trainers(coordinator_phase p) {
  return p == coordinator_phase::wire || p == coordinator_phase::train ||
         p == coordinator_phase::rounds || p == coordinator_phase::stop;
}

coordinator_phases::coordinator_phases(std::vector<std::string> names, bool ring,
                                       bool tolerate_trainer_loss)
  : names_(std::move(names)), ring_(ring), tolerate_(tolerate_trainer_loss),
    alive_(names_.size(), true), got_(names_.size(), false) {}

bool coordinator_phases::can_advance() const {
  return !failure_ && phase_ != coordinator_phase::done && complete();
}

std::vector<std::size_t> coordinator_phases::advance() {
  SS_CHECK(can_advance(), "the coordinator's phase is not complete, or the run has ended");
  if (phase_ == coordinator_phase::wire)
    wired_ = true; // the driver sent first_ring()
  phase_ = static_cast<coordinator_phase>(static_cast<int>(phase_) + 1);
  std::fill(got_.begin(), got_.end(), false);
  return asks_trainers(phase_) ? live() : std::vector<std::size_t>{};
}

bool coordinator_phases::reply(std::size_t i) {
  if (!asks_trainers(phase_) || i >= alive_.size() || !alive_[i] || got_[i])
    return false;
  got_[i] = true;
  return true;
}

bool coordinator_phases::complete() const {
  return !asks_trainers(phase_) || pending().empty();
}

std::vector<std::size_t> coordinator_phases::pending() const {
  std::vector<std::size_t> out;
  if (asks_trainers(phase_))
    for (std::size_t i = 0; i < alive_.size(); ++i)
      if (alive_[i] && !got_[i])
        out.push_back(i);
  return out;
}

std::string coordinator_phases::missing() const {
  std::string out;
  for (auto i : pending())
    out += (out.empty() ? "" : ", ") + names_[i];
  return out;
}

std::optional<ring_wiring> coordinator_phases::first_ring() const {
  SS_CHECK(phase_ == coordinator_phase::wire && complete(), "the ring is wired after `wire`");
  if (!ring_)
    return std::nullopt;
  return ring_wiring{0, live()};
}

std::uint64_t coordinator_phases::last_round(const std::vector<std::uint64_t>& rounds) const {
  SS_CHECK(phase_ == coordinator_phase::rounds && complete(), "the last round needs every round");
  SS_CHECK(rounds.size() == alive_.size(), "one round per trainer");
  if (!ring_)
    return 0;
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < alive_.size(); ++i)
    if (alive_[i])
      last = std::max(last, rounds[i] + 1);
  return last;
}

std::optional<ring_wiring> coordinator_phases::lose_trainer(std::size_t i, const std::string& why,
                                                            double at) {
  if (i >= alive_.size() || !alive_[i])
    return std::nullopt;
  if (!tolerate_) {
    fail(names_[i] + " is down (" + why + ")");
    return std::nullopt;
  }
  if (stopping()) {
    fail(names_[i] + " went down during the coordinated stop (" + why + ")");
    return std::nullopt;
  }
  alive_[i] = false;
  char when[32];
  std::snprintf(when, sizeof when, "%.1f", at);
  lost_.push_back(names_[i] + " lost after " + when + " s (" + why + ")");
  if (survivors() == 0) {
    fail("every trainer was lost");
    return std::nullopt;
  }
  if (!ring_ || !wired_)
    return std::nullopt; // EASGD: the dense shards lose a client; before wiring: left out of it
  return ring_wiring{++generation_, live()};
}

void coordinator_phases::fail(std::string why) {
  if (!failure_)
    failure_ = std::move(why);
}

std::size_t coordinator_phases::survivors() const {
  return static_cast<std::size_t>(std::count(alive_.begin(), alive_.end(), true));
}

bool coordinator_phases::stopping() const {
  return phase_ == coordinator_phase::rounds || phase_ == coordinator_phase::stop ||
         phase_ == coordinator_phase::report || phase_ == coordinator_phase::done;
}

std::vector<std::size_t> coordinator_phases::live() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < alive_.size(); ++i)
    if (alive_[i])
      out.push_back(i);
  return out;
}

} // namespace runtime
