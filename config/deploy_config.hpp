#pragma once
// The cluster spec of a multi-node run (`shadowsync node` / `launch`): the
// [deploy] and [openssl] groups, added to the train options so one INI file
// holds the whole job. See config/cluster-3node.ini.
//
//   deploy.nodes            [id=host:port, ...]  every process of the cluster
//   deploy.coordinator      node id (default: the first node)
//   deploy.trainers         node id per trainer          (sets cluster.trainers)
//   deploy.embedding-shards node id per embedding shard  (sets cluster.embedding-shards)
//   deploy.dense-shards     node id per dense shard      (sets cluster.dense-shards)
//   deploy.startup-timeout-ms, heartbeat-ms, connection-timeout-ms
//   deploy.insecure, deploy.insecure-remote, deploy.tolerate-trainer-loss,
//   deploy.direct-links
//   openssl.certificate/key/cafile/capath/passphrase  ("{node}" = this node's id)
//
// Checks (each failure names the key and what was expected): node ids
// [a-z0-9_-]+ and unique, host:port valid, every role names a known node, the
// role counts agree with cluster.* when those are set, the heartbeat is not
// shorter than a TLS handshake and the connection timeout is at least two
// heartbeats, and TLS is complete: certificate, key and cafile (or capath) set
// and readable. Without them the node refuses to start: CAF would otherwise
// fall back to anonymous, unauthenticated TLS. Plain TCP needs
// deploy.insecure=true and, unless deploy.insecure-remote=true, numeric
// loopback hosts (is_loopback).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "config/train_config.hpp"

namespace runtime {

struct node_address {
  std::string id, host;
  std::uint16_t port = 0;
  std::string text() const { return id + " (" + host + ":" + std::to_string(port) + ")"; }
};

struct tls_settings {
  std::string certificate, key, cafile, capath, passphrase;
};

struct deploy_settings {
  std::vector<node_address> nodes; // spec order
  std::string coordinator;
  std::vector<std::string> trainers, embedding_shards, dense_shards; // node id per role
  std::chrono::milliseconds startup_timeout{30000};
  std::chrono::milliseconds heartbeat{1000};
  std::chrono::milliseconds connection_timeout{5000};
  bool insecure = false;
  bool tolerate_trainer_loss = true;
  bool direct_links = true; // nodes connect to the nodes before them
  tls_settings tls;   // with {node} replaced by this node's id
  std::string digest; // of the [deploy] values: every node must agree

  const node_address* find(const std::string& id) const;
  // Roles of node `id`, as indices.
  std::vector<std::uint32_t> trainers_on(const std::string& id) const;
  std::vector<std::uint32_t> embedding_shards_on(const std::string& id) const;
  std::vector<std::uint32_t> dense_shards_on(const std::string& id) const;
};

void add_deploy_options(option_set& opts);

// The cluster.* overrides implied by the role lists, for the ones the user did
// not set ("--cluster.trainers=2", ...); empty when none is needed. An error
// when a set value disagrees with its list.
std::optional<std::string> deploy_overrides(const option_set& opts,
                                            std::vector<std::string>& extra_args);

// Reads and checks the spec for node `node` ("" for the launcher: TLS files
// are then not checked, since each node has its own).
std::optional<std::string> build_deploy(const option_set& opts, const std::string& node,
                                        deploy_settings& out);

// True for a numeric loopback address only: a dotted quad in 127.0.0.0/8 or
// ::1 (any IPv6 spelling). Names, "localhost" included, are not: what they
// resolve to is up to each machine's resolver.
bool is_loopback(const std::string& host);

// What multi-node runs (node, launch) do not do, refused naming the key:
// recovery.mode=full of a resumed run (as one process refuses it).
// (recovery.mode=full rolls every node back: deploy/node_coordinator.cpp;
// output.model, checkpoint.dir's cuts
// and the checkpoint of the end are written on the coordinator's node:
// cluster/shard_fetch.hpp, cluster/cut_run.hpp; checkpoint.resume is read
// by every node: deploy/node_plan.hpp.)
std::optional<std::string> refuse_in_multi_node(const train_config& cfg);

// An effective INI (option_set::effective_ini) without its [deploy] and
// [openssl] groups: the training configuration a multi-node run records in
// its saved model's manifest (no addresses, key paths or passphrase; a
// saved model's loader knows only the training options).
std::string without_deploy_groups(const std::string& ini);

// cluster.local-rows, refused before the train configuration is built (whose
// own check would ask for sim.clock=wall, which a multi-node run has anyway).
std::optional<std::string> refuse_local_rows_in_multi_node(const option_set& o);

} // namespace runtime
