#pragma once
// One process of a multi-node cluster (`shadowsync node --node=ID`): the
// overlay that runs the one-process cluster's roles and coordinator protocol
// across processes through CAF's middleman. node.cpp and node_link.cpp are
// deploy/'s only users of libcaf_io / libcaf_openssl.
//
// Every node: an actor system with the middleman (and the OpenSSL manager
// unless deploy.insecure), heartbeats deploy.heartbeat-ms / connection
// timeout deploy.connection-timeout-ms, the application identifier
// "shadowsync/<protocol>", and its node_agent published at its port.
// - Coordinator: waits up to deploy.startup-timeout-ms for every node's hello
//   (then fails naming the missing nodes), hands out the plan (shards first,
//   then trainers with the shards' handles), runs coordinator.hpp's protocol,
//   evaluates, and tells every node to end.
// - Other nodes: connect to the coordinator (retrying until the startup
//   deadline), say hello, connect to the nodes listed before them (direct
//   routes), report ready, then serve until told to end, or exit with an
//   error when the coordinator goes down.
#include <optional>
#include <string>

#include <caf/fwd.hpp>

#include "config/deploy_config.hpp"
#include "deploy/node_agent.hpp"
#include "report/progress.hpp"
#include "report/run_metrics.hpp"
#include "config/train_config.hpp"

namespace runtime {

struct node_context {
  std::string node;          // this node's id
  train_config cfg;          // the run (used by the coordinator)
  deploy_settings deploy;    // the spec, for this node
  std::string config_ini;    // the coordinator's effective configuration, sent to every node
};

// Coordinator: `out` gets the run's metrics. Returns an error message when
// the node or the job failed.
std::optional<std::string> run_node(const node_context& ctx, progress_reporter& progress,
                                    run_metrics& out);

// The coordinator's half of run_node (node_coordinator.cpp), given its
// running actor system and published agent; roster_inbox is the agent's
// roster_watcher (node_agent_config), read by nothing else.
std::optional<std::string> run_coordinator(caf::actor_system& sys, const node_context& ctx,
                                           const node_agent_actor& agent,
                                           caf::scoped_actor& roster_inbox,
                                           progress_reporter& progress, run_metrics& out);

// A member's half (node_member.cpp). join_coordinator: before its agent is
// spawned, connects to the coordinator into `coord` and, with TLS (`me`
// set), checks that it is the spec's coordinator. run_member: says hello,
// links to the nodes listed before it (deploy.direct-links), reports ready
// and serves until told to end (nullopt) or the coordinator is lost.
std::optional<std::string> join_coordinator(caf::actor_system& sys, const node_context& ctx,
                                            const node_identity* me, node_agent_actor& coord);
std::optional<std::string> run_member(caf::actor_system& sys, const node_context& ctx,
                                      const node_agent_actor& agent, const node_agent_actor& coord,
                                      const node_identity* me);

} // namespace runtime
