#pragma once
// The coordinator node's start of the whole cluster on the nodes: the
// embedding and dense shards first, then the trainers with the shards'
// handles (node_coordinator.cpp runs the job; under recovery.mode=full it
// starts them again after each rollback, from the newest cut).
#include <optional>
#include <string>
#include <vector>

#include <caf/node_id.hpp>
#include <caf/scoped_actor.hpp>

#include "cluster/cluster_handles.hpp"
#include "deploy/node.hpp"

namespace runtime {

// Has every node in `agents` (spec order) start its roles of the run
// configured by `config_ini` and fills c (handles, names, the nodes the
// coordinator watches) and trainer_nodes (each trainer's CAF node).
std::optional<std::string> spawn_cluster(caf::scoped_actor& self, const node_context& ctx,
                                         const std::vector<node_agent_actor>& agents,
                                         const std::string& config_ini, cluster_handles& c,
                                         std::vector<caf::node_id>& trainer_nodes);

// The coordinator's configuration `ini` with checkpoint.resume set to `cut`
// (recovery.mode=full: every node's roles start again from it). An error
// names what does not parse.
std::optional<std::string> ini_resuming(const std::string& ini, const std::string& cut,
                                        std::string& out);

} // namespace runtime
