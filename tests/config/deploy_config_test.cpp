// The multi-node spec ([deploy], [openssl]): parsing, role lists, the
// cluster.* counts they imply, and every refusal with its message.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "config/deploy_config.hpp"

namespace {

const std::string three = "--deploy.nodes=[coord=127.0.0.1:7000, t0=127.0.0.1:7001, t1=127.0.0.1:7002]";
const std::string roles[] = {"--deploy.trainers=[t0, t1]", "--deploy.embedding-shards=[coord]",
                             "--deploy.dense-shards=[coord]"};

// Parses args (plus the 3-node roles unless replaced) and builds the spec for `node`.
std::optional<std::string> spec(std::vector<std::string> args, const std::string& node,
                                runtime::deploy_settings& d, bool with_roles = true) {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::add_deploy_options(o);
  if (with_roles)
    args.insert(args.end(), std::begin(roles), std::end(roles));
  if (auto err = o.parse(args))
    return err;
  return runtime::build_deploy(o, node, d);
}

// Creates readable dummy files for the TLS paths; removed at exit.
std::string touch(const std::string& name) {
  struct made {
    std::vector<std::string> paths;
    ~made() {
      for (const auto& p : paths)
        std::remove(p.c_str());
    }
  };
  static made files;
  const std::string path = "/tmp/ss-deploy-test-" + name;
  std::ofstream(path) << "x";
  files.paths.push_back(path);
  return path;
}

} // namespace

TEST_CASE("deploy: nodes, coordinator, roles per node, digest") {
  runtime::deploy_settings d;
  REQUIRE_FALSE(spec({three, "--deploy.insecure=true"}, "t0", d));
  REQUIRE(d.nodes.size() == 3);
  CHECK(d.nodes[1].id == "t0");
  CHECK(d.nodes[1].host == "127.0.0.1");
  CHECK(d.nodes[1].port == 7001);
  CHECK(d.coordinator == "coord"); // the first node by default
  CHECK(d.trainers_on("t1") == std::vector<std::uint32_t>{1});
  CHECK(d.embedding_shards_on("coord") == std::vector<std::uint32_t>{0});
  CHECK(d.dense_shards_on("t0").empty());
  CHECK(d.digest.size() == 16);
  runtime::deploy_settings other;
  REQUIRE_FALSE(spec({three, "--deploy.insecure=true", "--deploy.heartbeat-ms=2000"}, "t0", other));
  CHECK(other.digest != d.digest); // nodes with different [deploy] sections are told apart
}

TEST_CASE("deploy: the role lists set cluster.* unless those disagree") {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::add_deploy_options(o);
  REQUIRE_FALSE(o.parse({three, roles[0], roles[1]}));
  std::vector<std::string> extra;
  REQUIRE_FALSE(runtime::deploy_overrides(o, extra));
  CHECK(extra == std::vector<std::string>{"--cluster.trainers=2", "--cluster.embedding-shards=1"});
  REQUIRE_FALSE(o.parse({three, roles[0], "--cluster.trainers=3"}));
  extra.clear();
  auto err = runtime::deploy_overrides(o, extra);
  REQUIRE(err);
  CHECK(err->find("'cluster.trainers' is 3") != std::string::npos);
  CHECK(err->find("lists 2 node(s)") != std::string::npos);
}

TEST_CASE("deploy: malformed or inconsistent specs are refused with the key") {
  runtime::deploy_settings d;
  auto expect = [&](std::vector<std::string> args, const std::string& node, const char* needle,
                    bool with_roles = true) {
    auto err = spec(std::move(args), node, d, with_roles);
    REQUIRE(err);
    INFO(*err);
    CHECK(err->find(needle) != std::string::npos);
  };
  expect({"--deploy.insecure=true"}, "t0", "'deploy.nodes' is empty");
  expect({"--deploy.nodes=[coord=127.0.0.1]", "--deploy.insecure=true"}, "", "is not id=host:port");
  expect({"--deploy.nodes=[Coord=127.0.0.1:1]", "--deploy.insecure=true"}, "", "bad node id");
  expect({"--deploy.nodes=[c=127.0.0.1:70000]", "--deploy.insecure=true"}, "", "bad port");
  expect({"--deploy.nodes=[c=127.0.0.1:1, c=127.0.0.1:2]", "--deploy.insecure=true"}, "",
         "appears twice");
  expect({three, "--deploy.coordinator=zz", "--deploy.insecure=true"}, "", "'deploy.coordinator'");
  expect({three, "--deploy.trainers=[t0, t9]", "--deploy.embedding-shards=[coord]",
          "--deploy.insecure=true"},
         "", "node 't9' is not in deploy.nodes", false);
  expect({three, "--deploy.embedding-shards=[coord]", "--deploy.insecure=true"}, "",
         "'deploy.trainers' is empty", false);
  expect({three, "--deploy.insecure=true"}, "t7", "no such node");
  expect({three, "--deploy.insecure=true", "--deploy.connection-timeout-ms=1500"}, "",
         "at least two heartbeats");
}

TEST_CASE("deploy: TLS must be complete; plain TCP only on loopback unless forced") {
  runtime::deploy_settings d;
  const auto cert = touch("{node}.pem"), key = touch("t0.key"), ca = touch("ca.pem");
  touch("t0.pem");
  auto err = spec({three}, "t0", d);
  REQUIRE(err);
  CHECK(err->find("'openssl.certificate' is not set") != std::string::npos);
  CHECK(err->find("scripts/make-certs.sh") != std::string::npos);
  err = spec({three, "--openssl.certificate=" + cert, "--openssl.key=" + key}, "t0", d);
  REQUIRE(err);
  CHECK(err->find("neither 'openssl.cafile' nor 'openssl.capath'") != std::string::npos);
  err = spec({three, "--openssl.certificate=/nonexistent/{node}.pem", "--openssl.key=" + key,
              "--openssl.cafile=" + ca},
             "t0", d);
  REQUIRE(err);
  CHECK(err->find("cannot read '/nonexistent/t0.pem'") != std::string::npos);
  REQUIRE_FALSE(spec({three, "--openssl.certificate=" + cert, "--openssl.key=" + key,
                      "--openssl.cafile=" + ca},
                     "t0", d));
  CHECK(d.tls.certificate == "/tmp/ss-deploy-test-t0.pem"); // {node} replaced
  const std::string remote = "--deploy.nodes=[coord=192.0.2.1:7000, t0=127.0.0.1:7001, t1=127.0.0.1:7002]";
  err = spec({remote, "--deploy.insecure=true"}, "t0", d);
  REQUIRE(err);
  CHECK(err->find("only allowed on loopback") != std::string::npos);
  CHECK(err->find("coord (192.0.2.1:7000)") != std::string::npos);
  CHECK_FALSE(spec({remote, "--deploy.insecure=true", "--deploy.insecure-remote=true"}, "t0", d));
  CHECK(runtime::is_loopback("127.0.0.1"));
  CHECK_FALSE(runtime::is_loopback("localhost")); // a name: numeric loopback only (issue 40)
  CHECK_FALSE(runtime::is_loopback("10.0.0.1"));
}
