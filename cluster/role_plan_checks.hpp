#pragma once
// Multi-node: the checks of a role plan from the wire and of a node's reply
// to it, before any index or handle in them is used.
#include <string>

#include "cluster/memory_estimate.hpp"
#include "config/train_config.hpp"
#include "messages/node_messages.hpp"

namespace runtime {

// Multi-node: a role_plan arrives from the wire. Checks it against the
// configuration it carries (`cfg`, parsed from plan.config_ini) before any
// index is used: every role index within its count, no index twice, and for
// trainers one non-null handle per embedding shard (and per dense shard with
// EASGD). Returns an empty string when the plan is sound, else what is wrong.
std::string check_role_plan(const messages::role_plan& plan, const train_config& cfg);

// The roles a plan asks a node to spawn, for the memory check (the
// evaluation is the coordinator's, checked at its start).
memory_roles plan_roles(const messages::role_plan& plan);

// The coordinator's check of a node's reply: one non-null handle per role
// index of the plan it answered. Empty when sound, else what is wrong.
std::string check_spawned(const messages::role_plan& plan, const messages::spawned_roles& r);

} // namespace runtime
