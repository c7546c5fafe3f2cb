// The coordinator actor's checkpoint cuts (see coordinator_actor.hpp, "Cuts"):
//   coordinator -> syncers, shards, trainers, dense shards: the cut (cut_run.cpp)
//   coordinator -> caller: cut(error) (the cut ended; awaited)
#include "cluster/coordinator_protocol.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace runtime {

void coordinator_protocol::start_cut() {
  SS_CHECK(setup_.checkpoints, "a poll asked for a cut, but the coordinator has no checkpointer");
  SS_CHECK(!cut_, "one cut at a time");
  std::vector<bool> lost;
  for (bool a : phases_.alive())
    lost.push_back(!a);
  auto run = std::make_shared<cut_run>(
    self_, *setup_.checkpoints, syncers_, std::move(lost),
    [this](std::optional<std::string> failure) { cut_ended(std::move(failure)); });
  cut_ = run;
  run->start(); // (it may end at once: `run` keeps it alive meanwhile)
  if (cutting() && setup_.poll_in_cuts)
    arm_poll();
}

void coordinator_protocol::cut_ended(std::optional<std::string> failure) {
  const bool voided = cut_ && cut_->voided();
  cut_.reset();
  if (ended_)
    return;
  if (voided && !phases_.failure()) {
    // A shard was lost during the cut and is being restarted: the caller
    // hears of the cut taken again, not of this one.
    retake_ = true;
    retake_cut();
    return;
  }
  // Aborted by losses the job survives (trainers): the job goes on without
  // the cut (the next one holds the lost trainer's stand-in: cut_run.hpp);
  // the caller hears of a cut that ended without error.
  const bool survived =
    failure && !cut_downs_.empty() &&
    std::all_of(cut_downs_.begin(), cut_downs_.end(),
                [this](const caf::down_msg& dm) { return survivable(dm); });
  if (survived) {
    spdlog::warn("{}; the job goes on", *failure);
    failure.reset();
  }
  hook<std::string>(
    [this, failure](std::string& e) {
      // The cut's own error ends the job whatever the caller answers.
      if (e.empty() && failure)
        e = *failure;
      if (!e.empty())
        hook_failed(std::move(e));
      // The DOWNs that aborted the cut, now as any other (the first failure
      // stays the job's error; under full recovery a lost shard still names
      // the rollback).
      auto downs = std::move(cut_downs_);
      cut_downs_.clear();
      for (auto& dm : downs)
        if (!ended_ && !phases_.failure())
          take_down(dm);
    },
    messages::cut_atom::value, failure ? *failure : std::string{});
}

void coordinator_protocol::retake_cut() {
  if (!retake_ || restarting() || cutting() || ended_ || phases_.failure() || rollback_)
    return;
  retake_ = false;
  start_cut();
}

} // namespace runtime
