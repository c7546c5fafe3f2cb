#pragma once
// node_agent: one per process of a multi-node cluster, published at the
// node's port. It is the actor the other nodes monitor (CAF 0.17 has no
// node-level DOWN), and it spawns and stops the node's roles:
//   - spawn(role_plan): parse the run's configuration sent by the
//     coordinator, build the roles with cluster_plan.hpp (the same
//     configurations as the one-process cluster), reply with their handles;
//   - end: stop every role spawned here, then quit (the process exits).
// The coordinator's agent also admits nodes:
//   - challenge(claimed id, node nonce): a fresh nonce for the sender's CAF
//     node, with the coordinator's own proof (node_trust.hpp);
//   - hello(node_hello, agent): checks the node's proof of its id (with
//     TLS: certificate from the cluster CA, CN = id, signature of the
//     challenge; node_identity.hpp), then the node id against the spec, the
//     protocol version, the heartbeat settings and the spec digest, and
//     replies with the full roster once every node has said hello (an error
//     names what did not match; the refusal is logged here too);
//   - ready(node id): the node has connected to its peers (only from that
//     node's verified connection);
//   - roster: who has joined and who is ready (only from this process);
//     the coordinator's main is also told every change as it happens
//     (node_agent_config::roster_watcher).
//     A node whose agent goes down leaves the roster: a new process of it
//     may say hello again (a shard node restarted under
//     recovery.mode=partial; node_coordinator.cpp).
// Authority: spawn and end are accepted only from the coordinator's node
// (the coordinator_node of the config, verified by the member before its
// agent starts; node_member.cpp). Everything refused is logged with the sender's
// verified identity (or its CAF node id), answered with an error where a
// reply is due, and has no effect.
// Roles spawned here are stopped when the agent terminates for any reason.
// Its interface is node_agent_actor (actors/interfaces.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include <caf/actor.hpp>
#include <caf/node_id.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/interfaces.hpp"
#include "messages/messages.hpp"
#include "messages/node_messages.hpp"
#include "config/deploy_config.hpp"
#include "deploy/node_identity.hpp"

namespace runtime {

using actors::node_agent_actor;

struct node_agent_config {
  std::string node;            // this node's id
  bool coordinator = false;    // admits the other nodes
  deploy_settings deploy;      // the spec (expected nodes, heartbeats, digest)
  // Members: the coordinator's CAF node, the only one that directs (spawn,
  // end). none: the coordinator runs in this process (the coordinator
  // itself; tests).
  caf::node_id coordinator_node;
  // TLS: this node's key and certificate and the cluster CA; the
  // coordinator checks hellos with it. Null with deploy.insecure.
  std::shared_ptr<const node_identity> identity;
  // Coordinator: a local actor sent `roster_atom, node_roster` (the whole
  // roster) once when the agent starts and after every change (a node
  // joined, became ready or left), in that order: the newest message it has
  // read is the roster as it is, so it can wait on these instead of polling
  // (node_coordinator.cpp). None: nobody is told.
  caf::actor roster_watcher;
};

node_agent_actor::behavior_type node_agent(node_agent_actor::pointer self, node_agent_config cfg);

// The run's configuration from INI text (the coordinator's effective
// configuration): train options plus the spec groups.
std::optional<std::string> parse_run_config(const std::string& ini, train_config& out,
                                            deploy_settings* deploy = nullptr);

} // namespace runtime
