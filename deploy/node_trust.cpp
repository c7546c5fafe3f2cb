// The coordinator's book of verified node identities (node_trust.hpp).
#include "deploy/node_trust.hpp"

#include <spdlog/spdlog.h>

namespace runtime {

using messages::node_challenge;
using messages::node_hello;

namespace {

constexpr std::size_t max_id = 64;     // node ids are short ([a-z0-9_-]+)
constexpr std::size_t max_nonce = 128; // hex digits

} // namespace

node_trust::node_trust(std::string self_id, bool insecure,
                       std::shared_ptr<const node_identity> identity, std::size_t max_pending)
  : self_id_(std::move(self_id)),
    insecure_(insecure),
    identity_(std::move(identity)),
    max_pending_(max_pending),
    run_(make_nonce()) {}

std::optional<std::string> node_trust::issue(const caf::node_id& from, const std::string& claimed,
                                             const std::string& node_nonce, node_challenge& out) {
  if (claimed.size() > max_id || node_nonce.size() > max_nonce)
    return "a challenge with an oversized node id or nonce from " + caf::to_string(from);
  // Bounded: one nonce per CAF node, and no more than max_pending nodes
  // waiting (every connection already holds a certificate of the CA).
  if (pending_.size() >= max_pending_ && pending_.count(from) == 0)
    pending_.erase(pending_.begin());
  out = node_challenge{};
  out.nonce = make_nonce();
  out.run = run_;
  if (out.nonce.empty())
    return std::string{"cannot draw a random nonce"};
  pending_[from] = out.nonce;
  if (insecure_ || !identity_)
    return std::nullopt;
  identity_proof p;
  if (auto err = identity_->prove(identity_statement("coordinator", self_id_, node_nonce, claimed), p))
    return err;
  out.certificate = std::move(p.certificate);
  out.signature = std::move(p.signature);
  return std::nullopt;
}

std::string node_trust::admit(const caf::node_id& from, const node_hello& h) {
  if (insecure_) {
    if (!warned_)
      spdlog::warn("deploy.insecure: node identities are not checked (plain TCP, loopback "
                   "only); any process that reaches a node's port can join as any node");
    warned_ = true;
    return {};
  }
  if (!identity_)
    return "this coordinator has no identity loaded to check it with";
  if (h.certificate.empty() || h.signature.empty())
    return "it sent no certificate and signature (is it running with deploy.insecure?)";
  auto at = pending_.find(from);
  if (at == pending_.end())
    return "it asked for no challenge from this connection (or its nonce was used up)";
  const auto nonce = at->second;
  pending_.erase(at); // single use: a second hello needs a new challenge
  return identity_->check(identity_proof{h.certificate, h.signature}, h.node,
                          identity_statement("hello", h.node, nonce, run_));
}

void node_trust::bind(const std::string& node, const caf::node_id& from) { verified_[node] = from; }

void node_trust::forget(const std::string& node) { verified_.erase(node); }

bool node_trust::is(const std::string& node, const caf::strong_actor_ptr& sender) const {
  if (!sender)
    return false;
  auto at = verified_.find(node);
  return at != verified_.end() && at->second == sender->node();
}

std::string node_trust::describe(const caf::strong_actor_ptr& sender) const {
  if (!sender)
    return "an anonymous sender";
  for (const auto& [node, id] : verified_)
    if (id == sender->node())
      return "node '" + node + "' (" + caf::to_string(id) + ")";
  return caf::to_string(sender->node()) + (insecure_ ? " (identities not checked)" : " (unverified)");
}

std::string check_coordinator(const node_identity& me, const std::string& my_id,
                              const std::string& coordinator_id, const std::string& my_nonce,
                              const node_challenge& c) {
  auto why = me.check(identity_proof{c.certificate, c.signature}, coordinator_id,
                      identity_statement("coordinator", coordinator_id, my_nonce, my_id));
  if (why.empty() && (c.nonce.empty() || c.nonce.size() > max_nonce || c.run.size() > max_nonce))
    why = "its challenge is malformed";
  return why;
}

} // namespace runtime
