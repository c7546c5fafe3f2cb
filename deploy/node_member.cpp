// A member node (not the coordinator): joins the coordinator, says hello,
// links to its peers, reports ready, then serves until told to end.
//   member main -> coordinator agent: challenge (checks the coordinator's
//     proof), then per hello attempt challenge + hello (signed), ready
//   member main: DOWN of the coordinator or its own agent -> end
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "deploy/isa_check.hpp"
#include "deploy/node.hpp"
#include "deploy/node_identity.hpp"
#include "deploy/node_link.hpp"
#include "deploy/node_trust.hpp"
#include "messages/errors.hpp"

namespace runtime {

using namespace messages;
using clock_type = std::chrono::steady_clock;

namespace {

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

} // namespace

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

} // namespace runtime
