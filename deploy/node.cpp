// Message flow (see node.hpp and node_agent.hpp):
//   member main -> coordinator agent: challenge (checks the coordinator's
//     proof), then per hello attempt challenge + hello (signed), ready
//   coordinator agent -> coordinator main: roster (each change, until every
//     node is ready; node_coordinator.cpp)
//   coordinator main -> every agent: spawn(shards), spawn(trainers), end
//   then the coordinator protocol of coordinator.hpp with the remote handles
#include "deploy/node.hpp"

#include <chrono>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <spdlog/spdlog.h>

#include "messages/errors.hpp"
#include "messages/registry.hpp"
#include "cluster/cluster_plan.hpp"
#include "cluster/coordinator.hpp"
#include "deploy/isa_check.hpp"
#include "cluster/scheduler_setup.hpp"
#include "deploy/node_agent.hpp"
#include "deploy/node_identity.hpp"
#include "deploy/node_trust.hpp"
#include "deploy/openssl_shim.hpp"

namespace runtime {

namespace {

using namespace messages;
using clock_type = std::chrono::steady_clock;

void configure(caf::actor_system_config& sc, const node_context& ctx) {
  const auto& d = ctx.deploy;
  register_messages(sc);
  sc.load<caf::io::middleman>();
  if (!d.insecure) {
    sc.load<caf::openssl::manager>();
    sc.set("openssl.certificate", d.tls.certificate);
    sc.set("openssl.key", d.tls.key);
    sc.set("openssl.cafile", d.tls.cafile);
    sc.set("openssl.capath", d.tls.capath);
    sc.set("openssl.passphrase", d.tls.passphrase);
  }
  sc.set("middleman.heartbeat-interval", caf::timespan{d.heartbeat});
  sc.set("middleman.connection-timeout", caf::timespan{d.connection_timeout});
  sc.set("middleman.app-identifiers",
         std::vector<std::string>{"shadowsync/" + std::to_string(node_protocol_version)});
  configure_node_scheduler(sc, scheduler_threads(ctx.cfg));
}

// A retry's pause, as a timer message to `self` on the actor clock. What a
// retry waits for happens outside this process (a peer's listener coming
// up, the OS freeing a port, the coordinator seeing an earlier process
// gone), so no local event announces it.
void pause_before_retry(caf::scoped_actor& self) {
  self->delayed_send(self, std::chrono::milliseconds(200), tick_atom::value);
  self->receive([](tick_atom) {});
}

caf::expected<node_agent_actor> connect_once(caf::actor_system& sys, bool tls,
                                             const node_address& a) {
  if (tls)
    return caf::openssl::remote_actor<node_agent_actor>(sys, a.host, a.port);
  return sys.middleman().remote_actor<node_agent_actor>(a.host, a.port);
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

// Asks the coordinator for a challenge, with a fresh nonce of this node's
// own; with TLS, checks the coordinator's proof over that nonce (its
// certificate is the spec's coordinator's, node_identity.hpp).
std::optional<std::string> ask_challenge(caf::scoped_actor& self, const node_context& ctx,
                                         const node_identity& me, const node_agent_actor& coord,
                                         node_challenge& out) {
  const auto& d = ctx.deploy;
  const auto mine = make_nonce();
  std::optional<std::string> err;
  self->request(coord, d.startup_timeout, challenge_atom::value, ctx.node, mine)
    .receive([&](node_challenge& c) { out = std::move(c); },
             [&](caf::error& e) {
               err = "the coordinator refused this node's challenge: " + error_text(e);
             });
  if (err)
    return err;
  if (auto why = check_coordinator(me, ctx.node, d.coordinator, mine, out); !why.empty())
    return "the node at " + d.find(d.coordinator)->text() + " is not the spec's coordinator '" +
           d.coordinator + "': claims '" + d.coordinator + "' but " + why;
  return std::nullopt;
}

// Member: connects to the coordinator and, with TLS, makes sure it is the
// spec's coordinator; its CAF node is then the only one that directs this
// node's agent.
std::optional<std::string> join_coordinator(caf::actor_system& sys, const node_context& ctx,
                                            const node_identity* me, node_agent_actor& coord) {
  const auto& d = ctx.deploy;
  const auto deadline = clock_type::now() + d.startup_timeout;
  if (auto err = connect(sys, d, *d.find(d.coordinator), deadline, coord))
    return err;
  if (!me) {
    spdlog::warn("deploy.insecure: node identities are not checked (plain TCP, loopback only)");
    return std::nullopt;
  }
  caf::scoped_actor self{sys};
  node_challenge c;
  if (auto err = ask_challenge(self, ctx, *me, coord, c))
    return err;
  spdlog::info("node {}: the coordinator {} proved its identity ({})", ctx.node, d.coordinator,
               caf::to_string(coord.node()));
  return std::nullopt;
}

// The hello, signed over a fresh challenge with TLS.
std::optional<std::string> make_hello(caf::scoped_actor& self, const node_context& ctx,
                                      const node_identity* me, const node_agent_actor& coord,
                                      node_hello& h) {
  const auto& d = ctx.deploy;
  h = node_hello{ctx.node, node_protocol_version, std::uint64_t(d.heartbeat.count()),
                 std::uint64_t(d.connection_timeout.count()), d.digest, {}, {}, isa_level()};
  if (!me)
    return std::nullopt;
  node_challenge c;
  if (auto err = ask_challenge(self, ctx, *me, coord, c))
    return err;
  identity_proof p;
  if (auto err = me->prove(identity_statement("hello", ctx.node, c.nonce, c.run), p))
    return err;
  h.certificate = std::move(p.certificate);
  h.signature = std::move(p.signature);
  return std::nullopt;
}

std::optional<std::string> run_member(caf::actor_system& sys, const node_context& ctx,
                                      const node_agent_actor& agent, const node_agent_actor& coord,
                                      const node_identity* me) {
  const auto& d = ctx.deploy;
  const auto deadline = clock_type::now() + d.startup_timeout;
  caf::scoped_actor self{sys};
  node_hello h;
  std::optional<std::string> err;
  // A restarted node may find its earlier process still in the roster until
  // the coordinator has seen it gone (node_taken): it asks again.
  for (bool again = true; again;) {
    again = false;
    if (auto e = make_hello(self, ctx, me, coord, h))
      return e;
    self->request(coord, d.startup_timeout, hello_atom::value, h,
                  caf::actor_cast<caf::strong_actor_ptr>(agent))
      .receive([&](node_roster&) {},
               [&](caf::error& e) {
                 const bool taken = errc_of(e, errc::none) == errc::node_taken;
                 if (taken && clock_type::now() < deadline) {
                   spdlog::info("node {}: the coordinator still has this node's earlier "
                                "process; asking again",
                                ctx.node);
                   again = true;
                   return;
                 }
                 err = "the coordinator did not admit this node: " + error_text(e);
               });
    if (again)
      pause_before_retry(self);
  }
  if (err)
    return err;
  // Direct links (deploy.direct-links): connect to every other node listed
  // before this one (all have joined once hello is answered, so they listen);
  // CAF's BASP then routes messages between the two straight over that
  // connection instead of through the coordinator node. (Before the OpenSSL
  // error-queue wrappers, deploy/openssl_shim.hpp, killing one such node
  // also dropped this node's link to the coordinator.) A node that cannot be
  // reached is left to the relay.
  if (d.direct_links)
    for (const auto& n : d.nodes) {
      if (n.id == ctx.node)
        break;
      if (n.id == d.coordinator)
        continue;
      node_agent_actor peer;
      if (auto e = connect(sys, d, n, deadline, peer))
        spdlog::warn("node {}: no direct link to node {} (messages go through the coordinator): {}",
                     ctx.node, n.text(), *e);
      else
        spdlog::info("node {}: direct link to node {}", ctx.node, n.id);
    }
  self->request(coord, d.startup_timeout, ready_atom::value, ctx.node)
    .receive([](bool) {}, [&](caf::error& e) { err = "ready: " + sys.render(e); });
  if (err)
    return err;
  spdlog::info("node {} ready", ctx.node);
  self->monitor(coord);
  self->monitor(agent);
  for (;;) {
    std::optional<std::string> result;
    bool done = false;
    self->receive([&](caf::down_msg& dm) {
      if (dm.source == agent.address()) {
        done = true; // told to end (or failed on its own)
        if (dm.reason && dm.reason != caf::exit_reason::user_shutdown)
          result = "node agent: " + sys.render(dm.reason);
      } else if (dm.source == coord.address()) {
        self->send_exit(agent, caf::exit_reason::user_shutdown);
        if (!dm.reason) { // it finished normally; its `end` to this node was lost
          spdlog::info("the coordinator has finished; stopping this node's roles");
          self->wait_for(agent);
          done = true;
          return;
        }
        result = "the coordinator " + d.find(d.coordinator)->text() + " is down (" +
                 sys.render(dm.reason) + "); stopping this node's roles";
      }
    });
    if (done)
      return result;
    if (result) {
      spdlog::error("{}", *result);
      self->wait_for(agent);
      return result;
    }
  }
}

} // namespace

std::optional<std::string> run_node(const node_context& ctx, progress_reporter& progress,
                                    run_metrics& out) {
  if (!ctx.deploy.insecure && !openssl_error_shim_active())
    return std::string{"internal error: the OpenSSL error-queue wrappers are not in effect "
                       "(deploy/openssl_shim.hpp); one failed TLS connection would drop the "
                       "others"};
  if (!ctx.deploy.insecure)
    ignore_sigpipe_for_tls(); // libcaf_openssl's per-call signal masking goes (openssl_shim.hpp)
  node_agent_config ac;
  ac.node = ctx.node;
  ac.coordinator = ctx.node == ctx.deploy.coordinator;
  ac.deploy = ctx.deploy;
  if (!ctx.deploy.insecure)
    if (auto e = node_identity::load(ctx.deploy.tls, ac.identity))
      return "node " + ctx.node + ": " + *e;
  if (ac.identity && ac.identity->name() != ctx.node) // the coordinator will refuse it
    spdlog::warn("node {}: openssl.certificate is for '{}', not '{}' (a certificate authorises "
                 "exactly the node id of its CN)",
                 ctx.node, ac.identity->name(), ctx.node);
  caf::actor_system_config sc;
  configure(sc, ctx);
  caf::actor_system sys{sc};
  // Coordinator: its agent tells this inbox every change of the roster.
  std::optional<caf::scoped_actor> roster_inbox;
  if (ac.coordinator) {
    roster_inbox.emplace(sys);
    ac.roster_watcher = caf::actor_cast<caf::actor>(*roster_inbox);
  }
  node_agent_actor coord;
  if (!ac.coordinator) {
    if (auto e = join_coordinator(sys, ctx, ac.identity.get(), coord))
      return e;
    ac.coordinator_node = coord.node();
  }
  auto agent = sys.spawn(node_agent, ac);
  std::optional<std::string> err = publish(sys, ctx, agent);
  if (!err)
    err = ac.coordinator ? run_coordinator(sys, ctx, agent, *roster_inbox, progress, out)
                         : run_member(sys, ctx, agent, coord, ac.identity.get());
  caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
  return err;
}

} // namespace runtime
