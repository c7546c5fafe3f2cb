#pragma once
// A node's roles from the coordinator's plan (node_agent.cpp spawns them
// when asked): the plan parsed and checked against this process (its
// configuration, the roles' memory), the roles spawned with the plan's
// authority, and the default synthetic training set and a resumed run's
// checkpoint prepared off the scheduler's threads.
#include <memory>
#include <optional>
#include <string>

#include <caf/fwd.hpp>

#include "actors/authority.hpp"
#include "cluster/coordinator.hpp"
#include "config/deploy_config.hpp"
#include "config/train_config.hpp"
#include "messages/node_messages.hpp"

namespace runtime {

// A plan parsed and checked: the run's configuration and the roles to start.
struct prepared_plan {
  messages::role_plan plan;
  actors::authority who; // the coordinator's node and the trainers' (the plan's)
  train_config cfg;
  deploy_settings deploy;
  // Trainers here and no data.train: generate the synthetic set first.
  bool needs_synthetic() const { return !plan.trainers.empty() && cfg.data.train.empty(); }
  // checkpoint.resume: what this node's roles start from, read by
  // resume_loader before they are spawned (the checkpoint must be at the
  // same path on every node, as the training data is).
  std::shared_ptr<const cluster_start> start;
  bool needs_resume() const { return !cfg.checkpoint.resume.empty() && !start; }
};

// Parses and checks `plan` into out (an error names what is wrong).
std::optional<std::string> prepare(const messages::role_plan& plan, prepared_plan& out);

// Spawns the roles of p, children of self; their handles.
messages::spawned_roles spawn_roles(caf::local_actor* self, const prepared_plan& p);

// Reads p's checkpoint.resume on its own thread (a checkpoint takes seconds
// to read and check): the embedding rows only where p has embedding shards.
// Replies to start with true once p->start is set (else an error naming the
// checkpoint), then quits. p is not touched by anyone else meanwhile.
caf::behavior resume_loader(caf::event_based_actor* self, std::shared_ptr<prepared_plan> p);

// Generates (or finds) the default synthetic training set on its own thread:
// a million rows take seconds, too long to hold a scheduler thread. Replies
// to start with the training file's path, then quits.
caf::behavior synthetic_preparer(caf::event_based_actor* self, data_settings d);

} // namespace runtime
