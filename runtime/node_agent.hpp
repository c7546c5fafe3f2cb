#pragma once
// node_agent: one per process of a multi-node cluster, published at the
// node's port. It is the actor the other nodes monitor (CAF 0.17 has no
// node-level DOWN), and it spawns and stops the node's roles:
//   - spawn(role_plan): parse the run's configuration sent by the
//     coordinator, build the roles with cluster_plan.hpp (the same
//     configurations as the one-process cluster), reply with their handles;
//   - end: stop every role spawned here, then quit (the process exits).
// The coordinator's agent also admits nodes:
//   - hello(node_hello, agent): checks the node id against the spec, the
//     protocol version, the heartbeat settings and the spec digest, and
//     replies with the full roster once every node has said hello (an error
//     names what did not match; the refusal is logged here too);
//   - ready(node id): the node has connected to its peers;
//   - roster: who has joined and who is ready (polled by the coordinator).
//     A node whose agent goes down leaves the roster: a new process of it
//     may say hello again (a shard node restarted under
//     recovery.mode=partial; node_coordinator.cpp).
// Roles spawned here are stopped when the agent terminates for any reason.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "messages/messages.hpp"
#include "messages/node_messages.hpp"
#include "runtime/deploy_config.hpp"

namespace runtime {

using node_agent_actor = caf::typed_actor<
  caf::replies_to<messages::hello_atom, messages::node_hello, caf::strong_actor_ptr>::with<
    messages::node_roster>,
  caf::replies_to<messages::ready_atom, std::string>::with<bool>,
  caf::replies_to<messages::roster_atom>::with<messages::node_roster>,
  caf::replies_to<messages::spawn_atom, messages::role_plan>::with<messages::spawned_roles>,
  caf::reacts_to<messages::end_atom>>;

struct node_agent_config {
  std::string node;            // this node's id
  bool coordinator = false;    // admits the other nodes
  deploy_settings deploy;      // the spec (expected nodes, heartbeats, digest)
};

node_agent_actor::behavior_type node_agent(node_agent_actor::pointer self, node_agent_config cfg);

// The run's configuration from INI text (the coordinator's effective
// configuration): train options plus the spec groups.
std::optional<std::string> parse_run_config(const std::string& ini, train_config& out,
                                            deploy_settings* deploy = nullptr);

} // namespace runtime
