// Message flow (see node_agent.hpp):
//   node main -> coordinator agent: challenge, hello, ready
//   coordinator main -> its agent: roster
//   coordinator agent -> its roster_watcher: roster (on every change)
//   coordinator main -> any agent: spawn(plan), end (from the coordinator's node only)
#include "deploy/node_agent.hpp"

#include <memory>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "messages/errors.hpp"
#include "cluster/cluster_plan.hpp"
#include "deploy/isa_check.hpp"
#include "deploy/node_plan.hpp"
#include "deploy/node_trust.hpp"
#include "engine/synthetic_data.hpp"

namespace runtime {

using namespace messages;

std::optional<std::string> parse_run_config(const std::string& ini, train_config& out,
                                            deploy_settings* deploy) {
  option_set opts;
  add_train_options(opts);
  add_deploy_options(opts);
  auto err = opts.parse_text(ini, "coordinator's configuration");
  if (err)
    return "the coordinator's configuration does not parse here: " + *err;
  if (auto e = build_train_config(opts, out))
    return "the coordinator's configuration is invalid here: " + *e;
  if (deploy)
    if (auto e = build_deploy(opts, "", *deploy))
      return "the coordinator's spec is invalid here: " + *e;
  return std::nullopt;
}

namespace {

struct agent_state {
  node_agent_config cfg;
  node_roster roster; // coordinator: every node of the spec, in order
  std::vector<caf::typed_response_promise<node_roster>> waiting; // hello replies
  std::vector<caf::strong_actor_ptr> roles;                      // spawned here
  std::unique_ptr<node_trust> trust; // coordinator: who is who
};

caf::error refuse(const std::string& what) {
  spdlog::error("refused a node: {}", what);
  return make_error(errc::protocol_mismatch, what);
}

// A message from a sender without the authority for it: logged with the
// sender's verified identity (or its CAF node id); no effect.
caf::error refuse_sender(const agent_state& st, const caf::strong_actor_ptr& sender,
                         const std::string& what, const std::string& only) {
  const auto text = "node " + st.cfg.node + " refused " + what + " from " +
                    st.trust->describe(sender) + ": only " + only + " may send it";
  spdlog::error("{}", text);
  return make_error(errc::bad_request, text);
}

// The sender is on the coordinator's node (this process when none is set).
bool from_coordinator(const agent_state& st, const caf::local_actor* self,
                      const caf::strong_actor_ptr& sender) {
  return sent_from(sender, st.cfg.coordinator_node ? st.cfg.coordinator_node : self->node());
}

// Checks a hello against the spec; an empty string admits it.
std::string check_hello(const agent_state& st, const node_hello& h) {
  const auto& d = st.cfg.deploy;
  if (h.protocol != node_protocol_version)
    return "node '" + h.node + "' speaks protocol " + std::to_string(h.protocol) +
           ", this coordinator " + std::to_string(node_protocol_version);
  if (!d.find(h.node))
    return "node '" + h.node + "' is not in deploy.nodes of the coordinator's spec";
  if (h.node == st.cfg.node)
    return "node '" + h.node + "' is the coordinator itself";
  if (std::uint64_t(d.heartbeat.count()) != h.heartbeat_ms ||
      std::uint64_t(d.connection_timeout.count()) != h.connection_timeout_ms)
    return "node '" + h.node + "' has heartbeat " + std::to_string(h.heartbeat_ms) +
           " ms / timeout " + std::to_string(h.connection_timeout_ms) +
           " ms, the coordinator " + std::to_string(d.heartbeat.count()) + " / " +
           std::to_string(d.connection_timeout.count()) + " ms (they must be equal)";
  if (h.spec_digest != d.digest)
    return "node '" + h.node + "' has a different [deploy] section (digest " + h.spec_digest +
           ", coordinator " + d.digest + ")";
  if (h.isa != isa_level())
    return "node '" + h.node + "' runs a binary built for the instruction-set level '" + h.isa +
           "', the coordinator for '" + isa_level() +
           "' (every node must run the same level, or their results differ: build all with "
           "cmake -DSS_ISA=" + isa_level() + ")";
  return {};
}

// The node's place is held by a process that has not been seen gone yet.
bool taken(const agent_state& st, const std::string& node) {
  for (std::size_t i = 0; i < st.roster.nodes.size(); ++i)
    if (st.roster.nodes[i] == node && st.roster.agents[i])
      return true;
  return false;
}

// The roster changed: the watcher, if any, gets it (node_agent_config).
// (anon_send: a typed actor may not send() to an untyped one; the agent's
// notices still arrive in the order it sent them.)
void tell_watcher(const agent_state& st) {
  if (st.cfg.roster_watcher)
    caf::anon_send(st.cfg.roster_watcher, roster_atom::value, st.roster);
}

bool complete(const node_roster& r) {
  for (const auto& a : r.agents)
    if (!a)
      return false;
  return true;
}

} // namespace

node_agent_actor::behavior_type node_agent(node_agent_actor::pointer self, node_agent_config cfg) {
  auto st = std::make_shared<agent_state>();
  st->cfg = std::move(cfg);
  // At most a few challenges outstanding per node of the spec.
  st->trust = std::make_unique<node_trust>(st->cfg.node, st->cfg.deploy.insecure,
                                           st->cfg.identity, 4 * st->cfg.deploy.nodes.size() + 4);
  for (const auto& n : st->cfg.deploy.nodes) {
    st->roster.nodes.push_back(n.id);
    const bool me = n.id == st->cfg.node;
    st->roster.agents.push_back(me ? caf::actor_cast<caf::strong_actor_ptr>(self) : nullptr);
    st->roster.ready.push_back(me ? 1 : 0);
  }
  // A node that went away leaves the roster, so that a restarted process of
  // it can say hello again (recovery.mode=partial restarts its shards).
  self->set_down_handler([=](caf::down_msg& dm) {
    for (std::size_t i = 0; i < st->roster.nodes.size(); ++i)
      if (st->roster.agents[i] && st->roster.agents[i]->address() == dm.source) {
        st->roster.agents[i] = nullptr;
        st->roster.ready[i] = 0;
        st->trust->forget(st->roster.nodes[i]);
        spdlog::info("node {} left ({})", st->roster.nodes[i], self->system().render(dm.reason));
        tell_watcher(*st);
      }
  });
  tell_watcher(*st);
  self->attach_functor([st](const caf::error&) {
    for (auto& r : st->roles)
      caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
  });
  return {
    [=](challenge_atom, const std::string& node,
        const std::string& nonce) -> caf::result<node_challenge> {
      const auto sender = self->current_sender();
      if (!st->cfg.coordinator || !sender)
        return refuse_sender(*st, sender, "a challenge", "nodes joining the coordinator");
      node_challenge c;
      if (auto err = st->trust->issue(sender->node(), node, nonce, c))
        return refuse(*err);
      return c;
    },
    [=](hello_atom, node_hello& h, caf::strong_actor_ptr& agent) -> caf::result<node_roster> {
      if (!st->cfg.coordinator)
        return refuse("node '" + h.node + "' said hello to " + st->cfg.node +
                      ", which is not the coordinator");
      const auto sender = self->current_sender();
      if (!sender)
        return refuse("an anonymous hello");
      const auto from = sender->node();
      if (auto why = check_hello(*st, h); !why.empty())
        return refuse(why);
      if (auto why = st->trust->admit(from, h); !why.empty()) {
        const auto text = "refused node hello from " + caf::to_string(from) + ": claims '" +
                          h.node + "' but " + why;
        spdlog::error("{}", text);
        return make_error(errc::protocol_mismatch, text);
      }
      if (!agent || agent->node() != from)
        return refuse("node '" + h.node + "' sent the handle of an agent on another node");
      if (taken(*st, h.node)) { // a restarted node may retry (node_member.cpp)
        spdlog::warn("node '{}' said hello again while its earlier process is still in the "
                     "cluster", h.node);
        return make_error(errc::node_taken, "node '" + h.node + "' has already joined");
      }
      for (std::size_t i = 0; i < st->roster.nodes.size(); ++i)
        if (st->roster.nodes[i] == h.node)
          st->roster.agents[i] = agent;
      st->trust->bind(h.node, from);
      self->monitor(agent); // its DOWN frees its place for a restarted process
      spdlog::info("node {} joined ({})", h.node,
                   st->cfg.deploy.insecure ? "identity not checked: deploy.insecure"
                                           : "identity verified: " + caf::to_string(from));
      tell_watcher(*st);
      auto p = self->make_response_promise<node_roster>();
      st->waiting.push_back(p);
      if (complete(st->roster)) {
        for (auto& w : st->waiting)
          w.deliver(st->roster);
        st->waiting.clear();
      }
      return p;
    },
    [=](ready_atom, const std::string& node) -> caf::result<bool> {
      const auto sender = self->current_sender();
      if (!st->cfg.coordinator || !st->trust->is(node, sender))
        return refuse_sender(*st, sender, "ready for node '" + node + "'",
                             "that node, once admitted by the coordinator,");
      for (std::size_t i = 0; i < st->roster.nodes.size(); ++i)
        if (st->roster.nodes[i] == node)
          st->roster.ready[i] = 1;
      tell_watcher(*st);
      return true;
    },
    [=](roster_atom) -> caf::result<node_roster> {
      const auto sender = self->current_sender();
      if (!sent_from(sender, self->node()))
        return refuse_sender(*st, sender, "roster", "this node's own process");
      return st->roster;
    },
    [=](spawn_atom, const role_plan& plan) -> caf::result<spawned_roles> {
      const auto sender = self->current_sender();
      if (!from_coordinator(*st, self, sender))
        return refuse_sender(*st, sender, "spawn", "the coordinator's node");
      auto p = std::make_shared<prepared_plan>();
      auto refuse_plan = [=](const std::string& why) {
        spdlog::error("node {}: {}", st->cfg.node, why);
        return make_error(errc::bad_request, "node " + st->cfg.node + ": " + why);
      };
      if (auto err = prepare(plan, *p))
        return refuse_plan(*err);
      p->who.director = sender->node();
      p->who.trainer_nodes = plan.trainer_nodes;
      auto start = [=] {
        auto out = spawn_roles(self, *p);
        for (auto* v : {&out.embedding_shards, &out.dense_shards, &out.trainers})
          st->roles.insert(st->roles.end(), v->begin(), v->end());
        return out;
      };
      if (!p->needs_synthetic() && !p->needs_resume())
        return start();
      // Off the scheduler's threads: the synthetic set, then the checkpoint.
      auto rp = self->make_response_promise<spawned_roles>();
      auto load = [=]() mutable {
        if (!p->needs_resume()) {
          rp.deliver(start());
          return;
        }
        auto loader = self->spawn<caf::detached>(resume_loader, p);
        self->request(loader, caf::infinite, start_atom::value)
          .then([=](bool) mutable { rp.deliver(start()); },
                [=](caf::error& e) mutable { rp.deliver(refuse_plan(error_text(e))); });
      };
      if (!p->needs_synthetic()) {
        load();
        return rp;
      }
      auto gen = self->spawn<caf::detached>(synthetic_preparer, p->cfg.data);
      self->request(gen, caf::infinite, start_atom::value)
        .then(
          [=](std::string& train) mutable {
            p->cfg.data.train = {train};
            load();
          },
          [=](caf::error& e) mutable { rp.deliver(refuse_plan(error_text(e))); });
      return rp;
    },
    [=](end_atom) {
      const auto sender = self->current_sender();
      if (!from_coordinator(*st, self, sender)) {
        refuse_sender(*st, sender, "end", "the coordinator's node");
        return;
      }
      for (auto& r : st->roles)
        self->send_exit(r, caf::exit_reason::user_shutdown);
      st->roles.clear();
      self->quit();
    },
  };
}

} // namespace runtime
