// Reaching the other processes at start-up: listening on this node's
// address and connecting to another node's, each retried until the
// startup deadline (see node_link.hpp).
#include "deploy/node_link.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <spdlog/spdlog.h>

#include "messages/atoms.hpp"

namespace runtime {

namespace {

using clock_type = std::chrono::steady_clock;

caf::expected<node_agent_actor> connect_once(caf::actor_system& sys, bool tls,
                                             const node_address& a) {
  if (tls)
    return caf::openssl::remote_actor<node_agent_actor>(sys, a.host, a.port);
  return sys.middleman().remote_actor<node_agent_actor>(a.host, a.port);
}

} // namespace

// A retry's pause, as a timer message to `self` on the actor clock. What a
// retry waits for happens outside this process (a peer's listener coming
// up, the OS freeing a port, the coordinator seeing an earlier process
// gone), so no local event announces it.
void pause_before_retry(caf::scoped_actor& self) {
  self->delayed_send(self, std::chrono::milliseconds(200), messages::tick_atom::value);
  self->receive([](messages::tick_atom) {});
}

// Connects to node `a`, retrying while nothing listens there yet.
std::optional<std::string> connect(caf::actor_system& sys, const deploy_settings& d,
                                   const node_address& a, clock_type::time_point deadline,
                                   node_agent_actor& out) {
  caf::scoped_actor self{sys};
  for (int attempt = 0;; ++attempt) {
    auto r = connect_once(sys, !d.insecure, a);
    if (r) {
      out = *r;
      return std::nullopt;
    }
    const bool not_up = r.error() == caf::sec::cannot_connect_to_node;
    if (!not_up)
      return "connecting to node " + a.text() + " failed: " + sys.render(r.error()) +
             (d.insecure ? " (is that node using TLS while this one runs with deploy.insecure?)"
                         : " (the TLS handshake was refused: a certificate not signed by the "
                           "cluster CA, a peer speaking plain TCP, or another shadowsync "
                           "version)");
    if (clock_type::now() > deadline)
      return "node " + a.text() + " is not reachable after " +
             std::to_string(d.startup_timeout.count()) + " ms: " + sys.render(r.error());
    if (attempt == 0)
      spdlog::info("waiting for node {} ...", a.text());
    pause_before_retry(self);
  }
}

std::optional<std::string> publish(caf::actor_system& sys, const node_context& ctx,
                                   const node_agent_actor& agent) {
  const auto* me = ctx.deploy.find(ctx.node);
  // A node started again right after its earlier process was killed may
  // find the port still held while that process is torn down: it tries
  // again until the startup deadline.
  const auto deadline = clock_type::now() + ctx.deploy.startup_timeout;
  auto r = caf::expected<std::uint16_t>{caf::sec::cannot_open_port};
  caf::scoped_actor self{sys};
  for (int attempt = 0;; ++attempt) {
    r = ctx.deploy.insecure ? sys.middleman().publish(agent, me->port, me->host.c_str(), true)
                            : caf::openssl::publish(agent, me->port, me->host.c_str(), true);
    if (r || clock_type::now() > deadline)
      break;
    if (attempt == 0)
      spdlog::info("node {}: cannot listen on {}:{} yet ({}); trying again until the startup "
                   "deadline",
                   ctx.node, me->host, me->port, sys.render(r.error()));
    pause_before_retry(self);
  }
  if (!r)
    return "node " + me->text() + ": cannot listen on " + me->host + ":" +
           std::to_string(me->port) + " within " +
           std::to_string(ctx.deploy.startup_timeout.count()) +
           " ms (deploy.startup-timeout-ms): " + sys.render(r.error());
  spdlog::info("node {} listening on {}:{} ({}, {} scheduler thread(s))", ctx.node, me->host, *r,
               ctx.deploy.insecure ? "plain TCP, insecure" : "mutual TLS",
               sys.scheduler().num_workers());
  return std::nullopt;
}

} // namespace runtime
