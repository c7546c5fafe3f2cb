// The node agent under CAF's deterministic scheduler: admission of nodes by
// the coordinator's agent (every refusal names what did not match; the
// roster goes to every node once all have joined), readiness, and a spawn
// plan that cannot be parsed here.
#include <doctest/doctest.h>

#include "runtime/node_agent.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;

namespace {

runtime::deploy_settings three_nodes() {
  runtime::deploy_settings d;
  d.nodes = {{"coord", "127.0.0.1", 7000}, {"t0", "127.0.0.1", 7001}, {"t1", "127.0.0.1", 7002}};
  d.coordinator = "coord";
  d.trainers = {"t0", "t1"};
  d.embedding_shards = {"coord"};
  d.digest = "00000000deadbeef";
  return d;
}

node_hello hello_from(const std::string& node, const runtime::deploy_settings& d) {
  return node_hello{node, node_protocol_version, std::uint64_t(d.heartbeat.count()),
                    std::uint64_t(d.connection_timeout.count()), d.digest};
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "node agent: admits the spec's nodes, roster when complete") {
  const auto d = three_nodes();
  runtime::node_agent_config cfg{"coord", true, d};
  auto agent = sys.spawn(runtime::node_agent, cfg);
  auto other = sys.spawn(runtime::node_agent, runtime::node_agent_config{"t0", false, d});
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
  auto agent = sys.spawn(runtime::node_agent, runtime::node_agent_config{"coord", true, d});
  caf::strong_actor_ptr none;
  auto refused = [&](node_hello h, const char* needle) {
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
  // A node agent that is not the coordinator admits no one.
  auto member = sys.spawn(runtime::node_agent, runtime::node_agent_config{"t0", false, d});
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
