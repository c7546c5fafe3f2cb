// One node's process (see node.hpp): its actor system with the middleman,
// its agent published at its address, then the coordinator's half
// (node_coordinator.cpp) or a member's (node_member.cpp).
// Message flow (see node.hpp and node_agent.hpp):
//   member main -> coordinator agent: challenge, hello, ready (node_member.cpp)
//   coordinator agent -> coordinator main: roster (each change, until every
//     node is ready; node_coordinator.cpp)
//   coordinator main -> every agent: spawn(shards), spawn(trainers), end
//   then the coordinator protocol of coordinator.hpp with the remote handles
#include "deploy/node.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/scheduler_setup.hpp"
#include "deploy/node_agent.hpp"
#include "deploy/node_identity.hpp"
#include "deploy/node_link.hpp"
#include "deploy/openssl_shim.hpp"
#include "messages/registry.hpp"

namespace runtime {

namespace {

using namespace messages;

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
  configure_node_scheduler(sc, scheduler_threads(ctx.cfg), ctx.cfg.cluster.max_throughput);
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
