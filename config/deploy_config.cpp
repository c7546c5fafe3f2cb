#include "config/deploy_config.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "data/hashing.hpp"

namespace runtime {

namespace {

using str_list = std::vector<std::string>;

void add(option_set& o, std::string key, opt_type t, std::string def, std::string help,
         std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
  o.add(option_spec{std::move(key), t, std::move(def), std::move(help), {}, min, max});
}

bool valid_id(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::optional<std::string> parse_node(const std::string& text, node_address& out) {
  const auto eq = text.find('=');
  const auto colon = text.rfind(':');
  const std::string what = "option 'deploy.nodes': '" + text + "' ";
  if (eq == std::string::npos || colon == std::string::npos || colon < eq)
    return what + "is not id=host:port";
  out.id = text.substr(0, eq);
  out.host = text.substr(eq + 1, colon - eq - 1);
  const auto port = text.substr(colon + 1);
  if (!valid_id(out.id))
    return what + "has a bad node id (expected [a-z0-9_-]+)";
  if (out.host.empty())
    return what + "has no host";
  unsigned v = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (ec != std::errc{} || p != port.data() + port.size() || v == 0 || v > 65535)
    return what + "has a bad port (expected 1..65535)";
  out.port = static_cast<std::uint16_t>(v);
  return std::nullopt;
}

std::string substitute(std::string s, const std::string& node) {
  for (auto at = s.find("{node}"); at != std::string::npos; at = s.find("{node}"))
    s.replace(at, 6, node);
  return s;
}

bool readable(const std::string& path) { return std::ifstream(path).good(); }

std::vector<std::uint32_t> indices_of(const str_list& roles, const std::string& id) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < roles.size(); ++i)
    if (roles[i] == id)
      out.push_back(std::uint32_t(i));
  return out;
}

const char* role_keys[][2] = {{"deploy.trainers", "cluster.trainers"},
                              {"deploy.embedding-shards", "cluster.embedding-shards"},
                              {"deploy.dense-shards", "cluster.dense-shards"}};

} // namespace

bool is_loopback(const std::string& host) {
  // Numeric only: a name (localhost included) means whatever the resolver
  // says on each machine. inet_pton takes exactly a dotted quad or an IPv6
  // address, so "127.1", "127.foo.example" and "127.0.0.1.evil" are refused.
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

const node_address* deploy_settings::find(const std::string& id) const {
  for (const auto& n : nodes)
    if (n.id == id)
      return &n;
  return nullptr;
}

std::vector<std::uint32_t> deploy_settings::trainers_on(const std::string& id) const {
  return indices_of(trainers, id);
}
std::vector<std::uint32_t> deploy_settings::embedding_shards_on(const std::string& id) const {
  return indices_of(embedding_shards, id);
}
std::vector<std::uint32_t> deploy_settings::dense_shards_on(const std::string& id) const {
  return indices_of(dense_shards, id);
}

void add_deploy_options(option_set& o) {
  constexpr auto b = opt_type::boolean;
  constexpr auto i = opt_type::integer;
  constexpr auto s = opt_type::string;
  constexpr auto l = opt_type::string_list;
  add(o, "deploy.nodes", l, "[]", "multi-node: every node as id=host:port (spec order)");
  add(o, "deploy.coordinator", s, "", "multi-node: the coordinator's node id (empty: the first node)");
  add(o, "deploy.trainers", l, "[]", "multi-node: the node id of each trainer (sets cluster.trainers)");
  add(o, "deploy.embedding-shards", l, "[]",
      "multi-node: the node id of each embedding shard (sets cluster.embedding-shards)");
  add(o, "deploy.dense-shards", l, "[]",
      "multi-node: the node id of each dense shard, EASGD (sets cluster.dense-shards)");
  add(o, "deploy.startup-timeout-ms", i, "30000",
      "multi-node: how long the coordinator waits for every node (and nodes for it)", 100, 3.6e6);
  add(o, "deploy.heartbeat-ms", i, "1000",
      "multi-node: middleman heartbeat interval, the same on every node", 100, 60000);
  add(o, "deploy.connection-timeout-ms", i, "5000",
      "multi-node: a peer silent this long is down (>= 2 heartbeats)", 200, 600000);
  add(o, "deploy.insecure", b, "false",
      "multi-node: plain TCP instead of mutual TLS, only when every host is numeric loopback "
      "(127.0.0.0/8 or ::1; not a name such as localhost)");
  add(o, "deploy.insecure-remote", b, "false",
      "multi-node: allow deploy.insecure with non-loopback hosts (unencrypted, unauthenticated)");
  add(o, "deploy.tolerate-trainer-loss", b, "true",
      "multi-node: a trainer node that dies leaves the job instead of ending it");
  add(o, "deploy.direct-links", b, "true",
      "multi-node: every node connects to the other nodes listed before it, so messages between "
      "two nodes go straight there; false: the coordinator node relays them");
  add(o, "openssl.certificate", s, "", "this node's certificate (PEM); {node} = node id");
  add(o, "openssl.key", s, "", "this node's private key (PEM); {node} = node id");
  add(o, "openssl.cafile", s, "", "the cluster CA certificate (PEM) peers must be signed by");
  add(o, "openssl.capath", s, "", "a directory of CA certificates (instead of cafile)");
  add(o, "openssl.passphrase", s, "", "passphrase of an encrypted private key");
}

std::optional<std::string> deploy_overrides(const option_set& o, str_list& extra) {
  for (const auto& k : role_keys) {
    const auto n = o.get_list(k[0]).size();
    if (n == 0)
      continue;
    if (o.is_set(k[1]) && std::size_t(o.get_int(k[1])) != n)
      return std::string("option '") + k[1] + "' is " + std::to_string(o.get_int(k[1])) +
             " (" + o.source(k[1]) + ") but '" + k[0] + "' lists " + std::to_string(n) +
             " node(s); drop one of them or make them agree";
    if (!o.is_set(k[1]))
      extra.push_back(std::string("--") + k[1] + "=" + std::to_string(n));
  }
  return std::nullopt;
}

std::optional<std::string> build_deploy(const option_set& o, const std::string& node,
                                        deploy_settings& d) {
  d = deploy_settings{};
  for (const auto& text : o.get_list("deploy.nodes")) {
    node_address a;
    if (auto err = parse_node(text, a))
      return err;
    if (d.find(a.id))
      return "option 'deploy.nodes': node id '" + a.id + "' appears twice";
    d.nodes.push_back(a);
  }
  if (d.nodes.empty())
    return "option 'deploy.nodes' is empty: list every node as id=host:port";
  d.coordinator = o.get_string("deploy.coordinator");
  if (d.coordinator.empty())
    d.coordinator = d.nodes.front().id;
  if (!d.find(d.coordinator))
    return "option 'deploy.coordinator': '" + d.coordinator + "' is not in deploy.nodes";
  d.trainers = o.get_list("deploy.trainers");
  d.embedding_shards = o.get_list("deploy.embedding-shards");
  d.dense_shards = o.get_list("deploy.dense-shards");
  if (d.trainers.empty())
    return "option 'deploy.trainers' is empty: name the node of each trainer";
  if (d.embedding_shards.empty())
    return "option 'deploy.embedding-shards' is empty: name the node of each embedding shard";
  for (const auto& k : role_keys)
    for (const auto& id : o.get_list(k[0]))
      if (!d.find(id))
        return std::string("option '") + k[0] + "': node '" + id + "' is not in deploy.nodes";
  if (!node.empty() && !d.find(node))
    return "--node=" + node + ": no such node in deploy.nodes of the spec";
  d.startup_timeout = std::chrono::milliseconds(o.get_int("deploy.startup-timeout-ms"));
  d.heartbeat = std::chrono::milliseconds(o.get_int("deploy.heartbeat-ms"));
  d.connection_timeout = std::chrono::milliseconds(o.get_int("deploy.connection-timeout-ms"));
  if (d.connection_timeout < 2 * d.heartbeat)
    return "option 'deploy.connection-timeout-ms' (" +
           std::to_string(d.connection_timeout.count()) +
           ") must be at least two heartbeats (deploy.heartbeat-ms = " +
           std::to_string(d.heartbeat.count()) + ")";
  d.insecure = o.get_bool("deploy.insecure");
  d.tolerate_trainer_loss = o.get_bool("deploy.tolerate-trainer-loss");
  d.direct_links = o.get_bool("deploy.direct-links");
  if (d.insecure) {
    if (!o.get_bool("deploy.insecure-remote"))
      for (const auto& n : d.nodes)
        if (!is_loopback(n.host))
          return "option 'deploy.insecure': plain TCP is only allowed on loopback (numeric "
                 "127.0.0.0/8 or ::1), but node " + n.text() +
                 " is not; use mutual TLS (openssl.*) or set deploy.insecure-remote=true";
  } else if (!node.empty()) {
    auto& t = d.tls;
    t.certificate = substitute(o.get_string("openssl.certificate"), node);
    t.key = substitute(o.get_string("openssl.key"), node);
    t.cafile = substitute(o.get_string("openssl.cafile"), node);
    t.capath = substitute(o.get_string("openssl.capath"), node);
    t.passphrase = o.get_string("openssl.passphrase");
    const std::string hint =
      " (mutual TLS needs openssl.certificate, openssl.key and openssl.cafile; "
      "scripts/make-certs.sh creates them. Plain TCP on loopback: deploy.insecure=true)";
    if (t.certificate.empty())
      return "option 'openssl.certificate' is not set" + hint;
    if (t.key.empty())
      return "option 'openssl.key' is not set" + hint;
    if (t.cafile.empty() && t.capath.empty())
      return "neither 'openssl.cafile' nor 'openssl.capath' is set" + hint;
    for (auto [key, path] : {std::pair{"openssl.certificate", &t.certificate},
                             std::pair{"openssl.key", &t.key}, std::pair{"openssl.cafile", &t.cafile}})
      if (!path->empty() && !readable(*path))
        return std::string("option '") + key + "': cannot read '" + *path + "'";
  }
  std::string all;
  for (const auto& k : o.keys())
    if (k.rfind("deploy.", 0) == 0)
      all += k + "=" + o.value_text(k) + "\n";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(data::hash_categorical(all, 0)));
  d.digest = hex;
  return std::nullopt;
}

std::optional<std::string> refuse_in_multi_node(const train_config& cfg) {
  if (cfg.recovery.full && !cfg.checkpoint.resume.empty())
    return "option 'recovery.mode' = full: resuming (checkpoint.resume) with full recovery is "
           "not built (a rollback would count the resumed run's examples twice); "
           "recovery.mode=partial resumes";
  // checkpoint.every-*: cuts, written on the coordinator's node (the shards'
  // files fetched over the wire: cluster/cut_run.hpp); checkpoint.dir alone:
  // the checkpoint of the end, as train writes it.
  return std::nullopt;
}

std::string without_deploy_groups(const std::string& ini) {
  std::istringstream in(ini);
  std::string line, out;
  bool dropped = false; // inside [deploy] or [openssl]
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[')
      dropped = line == "[deploy]" || line == "[openssl]";
    if (!dropped)
      out += line + "\n";
  }
  return out;
}

std::optional<std::string> refuse_local_rows_in_multi_node(const option_set& o) {
  if (!o.get_bool("cluster.local-rows"))
    return std::nullopt;
  return "option 'cluster.local-rows' = true (" + o.source("cluster.local-rows") +
         "): the workers of a multi-node run reach their shards by messages (use "
         "cluster.mode=simulated with sim.clock=wall)";
}

} // namespace runtime
