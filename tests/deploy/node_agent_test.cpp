// The node agent under CAF's deterministic scheduler: admission of nodes by
// the coordinator's agent (every refusal names what did not match; the
// roster goes to every node once all have joined), readiness, and a spawn
// plan that cannot be parsed here; with TLS identities, a hello must prove
// its id (tests/deploy/test_certs.hpp), and only the coordinator's node
// directs a member's agent.
#include <doctest/doctest.h>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/node_id.hpp>

#include "deploy/node_agent.hpp"
#include "deploy/isa_check.hpp"
#include "deploy/node_identity.hpp"
#include "deploy/node_trust.hpp"
#include "tests/actors/test_fixture.hpp"
#include "tests/deploy/test_certs.hpp"

using namespace messages;

namespace {

runtime::deploy_settings three_nodes() {
  runtime::deploy_settings d;
  d.nodes = {{"coord", "127.0.0.1", 7000}, {"t0", "127.0.0.1", 7001}, {"t1", "127.0.0.1", 7002}};
  d.coordinator = "coord";
  d.trainers = {"t0", "t1"};
  d.embedding_shards = {"coord"};
  d.digest = "00000000deadbeef";
  d.insecure = true; // no identities (the TLS case below loads them)
  return d;
}

node_hello hello_from(const std::string& node, const runtime::deploy_settings& d) {
  return node_hello{node, node_protocol_version, std::uint64_t(d.heartbeat.count()),
                    std::uint64_t(d.connection_timeout.count()), d.digest, {}, {},
                    runtime::isa_level()};
}

runtime::node_agent_config agent_config(const std::string& node, bool coordinator,
                                        const runtime::deploy_settings& d) {
  runtime::node_agent_config c;
  c.node = node;
  c.coordinator = coordinator;
  c.deploy = d;
  return c;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "node agent: admits the spec's nodes, roster when complete") {
  const auto d = three_nodes();
  auto cfg = agent_config("coord", true, d);
  auto agent = sys.spawn(runtime::node_agent, cfg);
  auto other = sys.spawn(runtime::node_agent, agent_config("t0", false, d));
  auto ptr = caf::actor_cast<caf::strong_actor_ptr>(other);
  auto first = request_async<node_roster>(agent, hello_atom::value, hello_from("t0", d), ptr);
  run();
  CHECK_FALSE(first->done()); // t1 has not joined yet
  auto roster = request<node_roster>(agent, roster_atom::value);
  REQUIRE(roster);
  CHECK(roster->nodes == std::vector<std::string>{"coord", "t0", "t1"});
  CHECK(roster->ready == std::vector<std::uint32_t>{1, 0, 0});
  CHECK(roster->agents[1] == ptr);
  CHECK_FALSE(roster->agents[2]);

  auto again = request<node_roster>(agent, hello_atom::value, hello_from("t0", d), ptr);
  REQUIRE_FALSE(again);
  CHECK(context_of(again.error()).find("already joined") != std::string::npos);

  auto second = request_async<node_roster>(agent, hello_atom::value, hello_from("t1", d), ptr);
  run();
  REQUIRE(first->done());
  REQUIRE(second->done());
  CHECK(first->get()->nodes.size() == 3);
  REQUIRE(request<bool>(agent, ready_atom::value, std::string{"t1"}));
  CHECK(request<node_roster>(agent, roster_atom::value)->ready == std::vector<std::uint32_t>{1, 0, 1});
  self->send(agent, end_atom::value);
  self->send(other, end_atom::value);
  run();
}

TEST_CASE_FIXTURE(test::actor_fixture, "node agent: refuses hellos that do not match the spec") {
  const auto d = three_nodes();
  auto agent = sys.spawn(runtime::node_agent, agent_config("coord", true, d));
  caf::strong_actor_ptr none;
  auto refused = [&](node_hello h, const std::string& needle) {
    auto r = request<node_roster>(agent, hello_atom::value, h, none);
    REQUIRE_FALSE(r);
    INFO(context_of(r.error()));
    CHECK(context_of(r.error()).find(needle) != std::string::npos);
  };
  refused(hello_from("t9", d), "not in deploy.nodes");
  refused(hello_from("coord", d), "the coordinator itself");
  auto h = hello_from("t0", d);
  h.protocol = node_protocol_version + 1;
  refused(h, "speaks protocol");
  h = hello_from("t0", d);
  h.heartbeat_ms = 250;
  refused(h, "must be equal");
  h = hello_from("t0", d);
  h.spec_digest = "1111111111111111";
  refused(h, "different [deploy] section");
  h = hello_from("t0", d);
  h.isa = std::string(runtime::isa_level()) == "x86-64-v4" ? "x86-64-v3" : "x86-64-v4";
  refused(h, "instruction-set level '" + h.isa + "', the coordinator for '" +
               runtime::isa_level() + "'");
  // A node agent that is not the coordinator admits no one.
  auto member = sys.spawn(runtime::node_agent, agent_config("t0", false, d));
  auto r = request<node_roster>(member, hello_atom::value, hello_from("t1", d), none);
  REQUIRE_FALSE(r);
  CHECK(context_of(r.error()).find("not the coordinator") != std::string::npos);
  // A plan whose configuration does not parse is an error, not a crash.
  role_plan bad;
  bad.config_ini = "[cluster]\ntrainers = two\n";
  bad.trainers = {0};
  auto s = request<spawned_roles>(member, spawn_atom::value, bad);
  REQUIRE_FALSE(s);
  CHECK(context_of(s.error()).find("does not parse here") != std::string::npos);
  self->send(agent, end_atom::value);
  self->send(member, end_atom::value);
  run();
}

TEST_CASE_FIXTURE(test::actor_fixture, "node agent: a hello proves its id with its certificate's key") {
  auto d = three_nodes();
  d.insecure = false;
  auto cfg = agent_config("coord", true, d);
  cfg.identity = test::certs().load("coord");
  auto agent = sys.spawn(runtime::node_agent, cfg);
  const auto t0 = test::certs().load("t0");
  const auto t1 = test::certs().load("t1");
  auto member = sys.spawn(runtime::node_agent, agent_config("t1", false, d));
  auto ptr = caf::actor_cast<caf::strong_actor_ptr>(member);
  // challenge, check the coordinator's proof, sign (as node_member.cpp does)
  auto signed_hello = [&](const runtime::node_identity& key, const std::string& claimed) {
    const auto mine = runtime::make_nonce();
    auto c = request<node_challenge>(agent, challenge_atom::value, claimed, mine);
    REQUIRE(c);
    CHECK(runtime::check_coordinator(key, claimed, "coord", mine, *c) == "");
    CHECK(runtime::check_coordinator(key, claimed, "t0", mine, *c) == "its certificate is for 'coord'");
    auto h = hello_from(claimed, d);
    runtime::identity_proof p;
    REQUIRE_FALSE(key.prove(runtime::identity_statement("hello", claimed, c->nonce, c->run), p));
    h.certificate = p.certificate;
    h.signature = p.signature;
    return h;
  };
  auto refused = [&](const node_hello& h, const std::string& needle) {
    auto r = request<node_roster>(agent, hello_atom::value, h, ptr);
    REQUIRE_FALSE(r);
    INFO(context_of(r.error()));
    CHECK(context_of(r.error()).find(needle) != std::string::npos);
  };
  // t0's certificate and key, claiming t1: refused, naming both ids.
  refused(signed_hello(*t0, "t1"), "claims 't1' but its certificate is for 't0'");
  // No proof at all (a node with deploy.insecure facing TLS).
  refused(hello_from("t1", d), "claims 't1' but it sent no certificate");
  // The real t1 is admitted ...
  const auto good = signed_hello(*t1, "t1");
  auto first = request_async<node_roster>(agent, hello_atom::value, good, ptr);
  run();
  CHECK_FALSE(first->done()); // t0 has not joined
  CHECK(request<node_roster>(agent, roster_atom::value)->agents[2] == ptr);
  // ... and its hello cannot be replayed: the nonce is used up, and a new
  // challenge's nonce is not the one it signed.
  refused(good, "asked for no challenge");
  REQUIRE(request<node_challenge>(agent, challenge_atom::value, std::string{"t1"},
                                  runtime::make_nonce()));
  refused(good, "signature does not verify");
  // ready only from the node's own verified connection (t0 has none).
  CHECK(request<bool>(agent, ready_atom::value, std::string{"t1"}));
  auto r = request<bool>(agent, ready_atom::value, std::string{"t0"});
  REQUIRE_FALSE(r);
  CHECK(context_of(r.error()).find("refused ready for node 't0'") != std::string::npos);
  CHECK(request<node_roster>(agent, roster_atom::value)->ready == std::vector<std::uint32_t>{1, 0, 1});
  self->send(agent, end_atom::value);
  self->send(member, end_atom::value);
  run();
}

TEST_CASE_FIXTURE(test::actor_fixture, "node agent: only the coordinator's node directs a member") {
  const auto d = three_nodes();
  caf::node_id::default_data::host_id_type host;
  host.fill(0x42);
  auto cfg = agent_config("t0", false, d);
  cfg.coordinator_node = caf::make_node_id(4242, host); // not this process
  auto member = sys.spawn(runtime::node_agent, cfg);
  role_plan plan;
  plan.config_ini = "[cluster]\ntrainers = two\n";
  auto s = request<spawned_roles>(member, spawn_atom::value, plan);
  REQUIRE_FALSE(s);
  INFO(context_of(s.error()));
  CHECK(context_of(s.error()).find("node t0 refused spawn from") != std::string::npos);
  CHECK(context_of(s.error()).find("only the coordinator's node may send it") != std::string::npos);
  // `end` from here is ignored: the agent still answers.
  self->send(member, end_atom::value);
  run();
  auto again = request<spawned_roles>(member, spawn_atom::value, plan);
  REQUIRE_FALSE(again);
  CHECK(context_of(again.error()).find("refused spawn") != std::string::npos);
  // The roster is this process's own business; a member admits no one.
  CHECK(request<node_roster>(member, roster_atom::value)); // from this process: answered
  self->send_exit(member, caf::exit_reason::user_shutdown);
  run();
}

TEST_CASE_FIXTURE(test::actor_fixture, "node messages: a challenge and a signed hello cross the wire") {
  // Registered (messages/registry.hpp): a message holding them survives
  // CAF's binary serializer, the path BASP takes.
  auto check = [&](auto x) {
    using T = decltype(x);
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    REQUIRE_FALSE(sink(caf::make_message(x)));
    caf::message back;
    caf::binary_deserializer source{sys, buf};
    REQUIRE_FALSE(source(back));
    REQUIRE(back.match_elements<T>());
    CHECK(back.get_as<T>(0) == x);
  };
  check(node_challenge{"ab01", "cd23", "-----BEGIN CERTIFICATE-----\n", "3045"});
  auto h = hello_from("t1", three_nodes());
  h.certificate = "-----BEGIN CERTIFICATE-----\n";
  h.signature = "3046";
  check(h);
}

// The coordinator's main waits on these notices instead of polling the
// roster (deploy/node_coordinator.cpp): one when the agent starts, one per
// change, in order, each the whole roster as it is then.
TEST_CASE_FIXTURE(test::actor_fixture, "node agent: tells its roster watcher every change") {
  const auto d = three_nodes();
  auto seen = std::make_shared<std::vector<node_roster>>();
  // (`seen` goes in as a spawn argument: CAF 0.17 dereferences a null tuple
  // for a function actor spawned without one, which UBSan reports.)
  auto watcher = sys.spawn(
    [](caf::event_based_actor*, std::shared_ptr<std::vector<node_roster>> out) -> caf::behavior {
      return {[out](roster_atom, node_roster& r) { out->push_back(std::move(r)); }};
    },
    seen);
  auto cfg = agent_config("coord", true, d);
  cfg.roster_watcher = watcher;
  auto agent = sys.spawn(runtime::node_agent, cfg);
  auto t0 = sys.spawn(runtime::node_agent, agent_config("t0", false, d));
  // Every actor stops however the test ends (a failed REQUIRE included): the
  // actor system's destructor would wait for them forever.
  struct stop_all {
    test::actor_fixture& f;
    std::vector<caf::actor> xs;
    ~stop_all() {
      for (auto& x : xs)
        f.self->send_exit(x, caf::exit_reason::user_shutdown);
      f.run();
    }
  } stop{*this, {watcher, caf::actor_cast<caf::actor>(agent), caf::actor_cast<caf::actor>(t0)}};
  run();
  REQUIRE(seen->size() == 1); // the start: only the coordinator itself
  CHECK(seen->back().ready == std::vector<std::uint32_t>{1, 0, 0});
  CHECK_FALSE(seen->back().agents[1]);

  auto t0_ptr = caf::actor_cast<caf::strong_actor_ptr>(t0);
  request_async<node_roster>(agent, hello_atom::value, hello_from("t0", d), t0_ptr);
  run();
  REQUIRE(seen->size() == 2); // t0 joined
  CHECK(seen->back().agents[1] == t0_ptr);
  CHECK(seen->back().ready == std::vector<std::uint32_t>{1, 0, 0});

  REQUIRE(request<bool>(agent, ready_atom::value, std::string{"t0"}));
  REQUIRE(seen->size() == 3); // t0 ready
  CHECK(seen->back().ready == std::vector<std::uint32_t>{1, 1, 0});

  // A refused hello changes nothing and tells nothing.
  REQUIRE_FALSE(request<node_roster>(agent, hello_atom::value, hello_from("t0", d), t0_ptr));
  CHECK(seen->size() == 3);

  self->send(t0, end_atom::value); // t0's process goes away: it leaves the roster
  run();
  REQUIRE(seen->size() == 4);
  CHECK_FALSE(seen->back().agents[1]);
  CHECK(seen->back().ready == std::vector<std::uint32_t>{1, 0, 0});
  auto now = request<node_roster>(agent, roster_atom::value);
  REQUIRE(now);
  CHECK(now->ready == seen->back().ready); // the newest notice is the roster as it is
}
