#pragma once
// The coordinator's book of who is who (DESIGN.md section 13): the nonces it
// has issued, and which CAF node id each admitted node id speaks from. The
// coordinator's node agent keeps one (node_agent.cpp); every handler that
// must know its sender asks it through `current_sender()->node()`.
//
//   issue(from, claimed, node nonce)   challenge: a fresh nonce for that CAF
//                                      node (replacing any earlier one) plus
//                                      the coordinator's own proof
//   admit(from, hello)                 checks the hello's proof against the
//                                      nonce issued to `from` (used up here)
//   bind / forget / is / describe      the verified identities
//
// With deploy.insecure there are no identities: nothing is signed or
// checked, admit only records who said hello, and the first hello logs that
// identities are not checked. Not thread-safe: one actor's state.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor_control_block.hpp>
#include <caf/node_id.hpp>

#include "messages/node_messages.hpp"
#include "deploy/node_identity.hpp"

namespace runtime {

class node_trust {
public:
  // `identity`: this node's key and the cluster CA; null with `insecure`.
  node_trust(std::string self_id, bool insecure, std::shared_ptr<const node_identity> identity,
             std::size_t max_pending);

  // A challenge for the node that `from` says it is. An error (refusal
  // text) for an oversized request or when signing fails.
  std::optional<std::string> issue(const caf::node_id& from, const std::string& claimed,
                                   const std::string& node_nonce, messages::node_challenge& out);

  // Empty when `h` proves h.node for `from`; else the reason, phrased to
  // follow "claims '<id>' but ". Uses up the nonce issued to `from`.
  std::string admit(const caf::node_id& from, const messages::node_hello& h);

  void bind(const std::string& node, const caf::node_id& from);
  void forget(const std::string& node);
  // `sender` is an actor on the CAF node bound to `node`.
  bool is(const std::string& node, const caf::strong_actor_ptr& sender) const;
  // For logs: "node 't0' (<caf node id>)" when verified, else "<caf node id>
  // (unverified)", or "an anonymous sender".
  std::string describe(const caf::strong_actor_ptr& sender) const;

  const std::string& run() const { return run_; }

private:
  std::string self_id_;
  bool insecure_;
  std::shared_ptr<const node_identity> identity_;
  std::size_t max_pending_;
  std::string run_; // this coordinator process's random run id
  std::map<caf::node_id, std::string> pending_;  // nonce issued to each CAF node
  std::map<std::string, caf::node_id> verified_; // node id -> its CAF node
  bool warned_ = false;
};

// A member's check of the coordinator's answer to its challenge: the proof
// is the spec's coordinator's, over this node's nonce and id. Empty when it
// holds; else a sentence naming the coordinator's address and the reason.
std::string check_coordinator(const node_identity& me, const std::string& my_id,
                              const std::string& coordinator_id, const std::string& my_nonce,
                              const messages::node_challenge& c);

} // namespace runtime
