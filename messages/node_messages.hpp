#pragma once
// The multi-node protocol (deploy/node*.cpp): how the nodes of a cluster
// spec find the coordinator, receive the plan and are told to exit.
//
//   node -> coordinator agent: challenge(claimed id, node nonce)
//        <- node_challenge (a fresh nonce; the coordinator's own proof)
//   node -> coordinator agent: hello(node_hello with its proof, its agent)
//        <- node_roster once every node of the spec has said hello (or an error)
//   node -> coordinator agent: ready (after connecting to its earlier peers)
//   coordinator -> node agent: spawn(role_plan) -> spawned_roles
//   coordinator -> node agent: end (stop the roles, exit)
//
// The CAF application identifier ("shadowsync/<protocol>") already refuses a
// peer of another protocol version at the BASP handshake; hello checks it
// again with a clear message, and checks that the heartbeat settings match.
// Identities (deploy/node_identity.hpp): with TLS a node proves the id it
// claims by signing the coordinator's challenge with its key; only then does
// the coordinator record the CAF node id of that connection as that node.
// Every agent handler then checks who sent it (sent_from below).
#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor_control_block.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/node_id.hpp>

namespace messages {

// 6: the compact DCT wire (model/dct_codec.hpp: varint or bitmap indices, half values).
// 7: progress reports split bytes by kind and shard and carry per-trainer counters.
// 8: an embedding shard sends its model file in pieces (save(offset) -> file_chunk).
// 9: checkpoint cuts: a shard keeps its cut's file, fetched in pieces (cut(N, offset)).
// 10: DCT payloads: varint size and count, indices maybe as Golomb-Rice codes (format bit 3).
constexpr std::uint32_t node_protocol_version = 10;

using hello_atom = caf::atom_constant<caf::atom("hello")>;   // a node joins
using ready_atom = caf::atom_constant<caf::atom("ready")>;   // connected to its peers
using spawn_atom = caf::atom_constant<caf::atom("spawn")>;   // start roles here
using roster_atom = caf::atom_constant<caf::atom("roster")>; // who has joined
using challenge_atom = caf::atom_constant<caf::atom("challenge")>; // before hello

// True when `sender` (a handler's current_sender()) is an actor of node `n`:
// how a handler asks whether the verified node it expects sent the message.
// An anonymous message (no sender) is from no one.
inline bool sent_from(const caf::strong_actor_ptr& sender, const caf::node_id& n) {
  return sender != nullptr && sender->node() == n;
}

struct node_hello {
  std::string node;                 // its id in the spec
  std::uint32_t protocol = node_protocol_version;
  std::uint64_t heartbeat_ms = 0;   // middleman.heartbeat-interval
  std::uint64_t connection_timeout_ms = 0;
  std::string spec_digest;          // hash of the spec's [deploy] section
  // Its proof of `node` (empty with deploy.insecure): its certificate (PEM)
  // and its signature (hex) of the statement ("hello", node, the nonce of
  // the challenge, the coordinator's run id).
  std::string certificate;
  std::string signature;
  // The instruction-set level its binary is built for (deploy/isa_check.hpp):
  // every node of a cluster computes with the same one, or their bits differ.
  std::string isa;
  friend bool operator==(const node_hello& a, const node_hello& b) {
    return a.node == b.node && a.protocol == b.protocol && a.heartbeat_ms == b.heartbeat_ms &&
           a.connection_timeout_ms == b.connection_timeout_ms && a.spec_digest == b.spec_digest &&
           a.certificate == b.certificate && a.signature == b.signature && a.isa == b.isa;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_hello& x) {
  return f(caf::meta::type_name("node_hello"), x.node, x.protocol, x.heartbeat_ms,
           x.connection_timeout_ms, x.spec_digest, x.certificate, x.signature, x.isa);
}

// The coordinator's answer to challenge(claimed id, node nonce): the nonce
// the node signs in its hello (single use, for the sender's CAF node), the
// coordinator's run id, and the coordinator's proof (certificate and
// signature of ("coordinator", its id, the node's nonce, the claimed id);
// empty with deploy.insecure).
struct node_challenge {
  std::string nonce;
  std::string run;
  std::string certificate;
  std::string signature;
  friend bool operator==(const node_challenge& a, const node_challenge& b) {
    return a.nonce == b.nonce && a.run == b.run && a.certificate == b.certificate &&
           a.signature == b.signature;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_challenge& x) {
  return f(caf::meta::type_name("node_challenge"), x.nonce, x.run, x.certificate, x.signature);
}

// The nodes that have joined (and, in the hello reply, all of them), in spec order.
struct node_roster {
  std::vector<std::string> nodes;
  std::vector<caf::strong_actor_ptr> agents;
  // 1: sent ready. Not a byte vector: CAF 0.17.6 decodes byte vectors by
  // resizing to the announced length before checking the bytes left, so 18
  // hostile bytes made a node allocate 2.4 GB (tests/fuzz/messages_fuzz.cpp);
  // other element types are decoded one by one.
  std::vector<std::uint32_t> ready;
  friend bool operator==(const node_roster& a, const node_roster& b) {
    return a.nodes == b.nodes && a.agents == b.agents && a.ready == b.ready;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_roster& x) {
  return f(caf::meta::type_name("node_roster"), x.nodes, x.agents, x.ready);
}

// What a node starts: the run's configuration (INI text, as the coordinator
// resolved it) and the indices of its roles. Trainers also get the shards.
struct role_plan {
  std::string config_ini;
  std::vector<std::uint32_t> embedding_shards, dense_shards, trainers;
  std::vector<caf::strong_actor_ptr> shards, dense; // every shard, in index order
  // The CAF node of each trainer's process (by trainer id), as the
  // coordinator verified it at hello: the only nodes besides the
  // coordinator's that the roles accept data-plane messages from
  // (actors/authority.hpp).
  std::vector<caf::node_id> trainer_nodes;
  friend bool operator==(const role_plan& a, const role_plan& b) {
    return a.config_ini == b.config_ini && a.embedding_shards == b.embedding_shards &&
           a.dense_shards == b.dense_shards && a.trainers == b.trainers && a.shards == b.shards &&
           a.dense == b.dense && a.trainer_nodes == b.trainer_nodes;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, role_plan& x) {
  return f(caf::meta::type_name("role_plan"), x.config_ini, x.embedding_shards, x.dense_shards,
           x.trainers, x.shards, x.dense, x.trainer_nodes);
}

// The actors a node spawned for a role_plan, parallel to its index lists.
struct spawned_roles {
  std::vector<caf::strong_actor_ptr> embedding_shards, dense_shards, trainers;
  friend bool operator==(const spawned_roles& a, const spawned_roles& b) {
    return a.embedding_shards == b.embedding_shards && a.dense_shards == b.dense_shards &&
           a.trainers == b.trainers;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, spawned_roles& x) {
  return f(caf::meta::type_name("spawned_roles"), x.embedding_shards, x.dense_shards,
           x.trainers);
}

} // namespace messages
