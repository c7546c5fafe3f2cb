#pragma once
// Reaching the other processes of a multi-node cluster at start-up
// (node_link.cpp): this node's agent listening at its spec address, and a
// connection to another node's agent. Both retry while the other side is
// not there yet, until a deadline on the steady clock; TLS unless
// deploy.insecure. Errors are values: a message naming the node and what to
// check.
#include <chrono>
#include <optional>
#include <string>

#include <caf/fwd.hpp>

#include "config/deploy_config.hpp"
#include "deploy/node.hpp"
#include "deploy/node_agent.hpp"

namespace runtime {

// Waits one retry's pause (200 ms) on `self`'s actor clock.
void pause_before_retry(caf::scoped_actor& self);

// Connects to the agent of node `a` into `out`, retrying while nothing
// listens there yet (until `deadline`); any other failure (a refused TLS
// handshake, another protocol version) ends the tries at once.
std::optional<std::string> connect(caf::actor_system& sys, const deploy_settings& d,
                                   const node_address& a,
                                   std::chrono::steady_clock::time_point deadline,
                                   node_agent_actor& out);

// Publishes `agent` at this node's spec address, retrying while the port is
// still held (a node started again right after its earlier process was
// killed) until deploy.startup-timeout-ms.
std::optional<std::string> publish(caf::actor_system& sys, const node_context& ctx,
                                   const node_agent_actor& agent);

} // namespace runtime
