// Fault injection in the simulated cluster (config/faults.hpp,
// cluster/fault_injector.hpp): the entries of faults.kill, faults.freeze and
// faults.slow-nic are parsed and checked with named errors; a frozen host and
// a slow NIC cost the run the time they should, replayably on the virtual
// clock; a freeze under the wall clock holds the host's messages until it
// ends. (Kills: virtual_cluster_test.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cluster/fault_injector.hpp"
#include "config/faults.hpp"
#include "tests/cluster/cluster_run.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace faults_test {

namespace {

using runtime::fault_event;

struct data_files : test::synthetic_train_file {
  data_files() : synthetic_train_file("faults", 8000, 32) {}
};

runtime::run_metrics run(const data_files& d, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--data.train=" + d.train, "--cluster.mode=simulated",
                                   "--output.progress=none", "--model.rows-per-table=20000",
                                   "--cluster.trainers=2", "--cluster.embedding-shards=2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return test::run_cluster(test::train_config_of(args));
}

bool has_line(const std::vector<std::string>& lines, const std::string& prefix) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const auto& l) { return l.rfind(prefix, 0) == 0; });
}

} // namespace

TEST_CASE("faults: entries are parsed, and mistakes named") {
  std::vector<fault_event> k;
  REQUIRE(!runtime::parse_faults("faults.kill", {"trainer-3@0.5", "dense-shard-0@12.5s"}, k));
  REQUIRE(!runtime::parse_faults("faults.freeze", {"embedding-shard-1@0.25+2s"}, k));
  REQUIRE(!runtime::parse_faults("faults.slow-nic", {"trainer-0@1s+0.5s*0.1"}, k));
  REQUIRE(k.size() == 4);
  CHECK(k[0].what == fault_event::action::kill);
  CHECK(k[0].kind == fault_event::role::trainer);
  CHECK(k[0].index == 3);
  CHECK(*k[0].fraction == 0.5);
  CHECK(k[1].kind == fault_event::role::dense_shard);
  CHECK(*k[1].seconds == 12.5);
  CHECK(k[2].what == fault_event::action::freeze);
  CHECK(k[2].kind == fault_event::role::embedding_shard);
  CHECK(*k[2].fraction == 0.25);
  CHECK(k[2].duration == 2.0);
  CHECK(k[3].what == fault_event::action::slow_nic);
  CHECK(*k[3].seconds == 1.0);
  CHECK(k[3].duration == 0.5);
  CHECK(k[3].factor == 0.1);
  const std::vector<std::pair<std::string, std::string>> bad = {
    {"faults.kill", "trainer-1"},         {"faults.kill", "worker-1@0.5"},
    {"faults.kill", "trainer-x@0.5"},     {"faults.kill", "trainer-1@1.5"},
    {"faults.kill", "trainer-1@-2s"},     {"faults.kill", "trainer-1@soon"},
    {"faults.freeze", "trainer-1@0.5"},   {"faults.freeze", "trainer-1@0.5+2"},
    {"faults.freeze", "trainer-1@0.5+0s"}, {"faults.slow-nic", "trainer-1@0.5+2s"},
    {"faults.slow-nic", "trainer-1@0.5+2s*0"}, {"faults.slow-nic", "trainer-1@0.5+2s*1.5"},
  };
  for (const auto& [key, entry] : bad) {
    CAPTURE(entry);
    const auto e = runtime::parse_faults(key, {entry}, k);
    REQUIRE(e);
    CHECK(e->find(entry) != std::string::npos);
    CHECK(e->find(key) != std::string::npos);
  }
}

TEST_CASE("faults: a role the cluster lacks, or a slow NIC without the network model") {
  data_files d;
  auto cfg = test::train_config_of({"--data.train=" + d.train, "--cluster.mode=simulated",
                                    "--cluster.trainers=2", "--faults.kill=[trainer-2@0.5]"});
  auto e = runtime::check_faults(cfg.sim.faults, cfg);
  REQUIRE(e);
  CHECK(e->find("cluster.trainers = 2") != std::string::npos);
  cfg = test::train_config_of({"--data.train=" + d.train, "--cluster.mode=simulated",
                               "--faults.slow-nic=[trainer-0@0.5+1s*0.5]"});
  e = runtime::check_faults(cfg.sim.faults, cfg);
  REQUIRE(e);
  CHECK(e->find("net.enabled") != std::string::npos);
  // And a mode without simulated hosts refuses them at parse time.
  runtime::option_set o;
  runtime::add_train_options(o);
  REQUIRE(!o.parse({"--data.train=" + d.train, "--cluster.mode=sequential",
                    "--faults.freeze=[trainer-0@0.5+1s]"}));
  runtime::train_config c;
  const auto built = runtime::build_train_config(o, c);
  REQUIRE(built);
  CHECK(built->find("faults.freeze") != std::string::npos);
}

TEST_CASE("faults: on the virtual clock a frozen trainer host delays the run by the freeze") {
  data_files d;
  const std::vector<std::string> clock = {"--sim.clock=virtual"};
  const auto base = run(d, clock);
  const double freeze = 2 * base.seconds;
  auto cmd = clock;
  cmd.push_back("--faults.freeze=[trainer-1@0s+" + std::to_string(freeze) + "s]");
  const auto frozen = run(d, cmd);
  CAPTURE(base.seconds);
  CAPTURE(frozen.seconds);
  CHECK(frozen.examples == base.examples);
  REQUIRE(frozen.faults.size() == 1);
  CHECK(has_line(frozen.faults, "froze trainer-1 (host 1) at 0.000 s"));
  // Trainer 1 starts its part only after the freeze; its part alone took
  // most of the base run.
  CHECK(frozen.seconds > freeze + 0.5 * base.seconds);
  CHECK(frozen.seconds < freeze + 1.5 * base.seconds);
  CHECK(runtime::to_json(run(d, cmd)) == runtime::to_json(frozen)); // replays
}

TEST_CASE("faults: on the virtual clock a slow shard NIC slows the run, and only while it lasts") {
  data_files d;
  const std::vector<std::string> cmd = {"--sim.clock=virtual", "--net.enabled=true",
                                        "--net.bandwidth-gbps=1", "--sync.algorithm=none"};
  const auto base = run(d, cmd);
  auto slow_cmd = cmd;
  slow_cmd.push_back("--faults.slow-nic=[embedding-shard-0@0s+100s*0.01]");
  const auto slow = run(d, slow_cmd);
  auto brief_cmd = cmd;
  brief_cmd.push_back("--faults.slow-nic=[embedding-shard-0@0s+" +
                      std::to_string(0.1 * base.seconds) + "s*0.01]");
  const auto brief = run(d, brief_cmd);
  CAPTURE(base.seconds);
  CAPTURE(brief.seconds);
  CAPTURE(slow.seconds);
  REQUIRE(slow.net);
  CHECK(slow.examples == base.examples);
  CHECK(slow.net->bytes == base.net->bytes); // the same traffic (sync none), slower
  CHECK(slow.seconds > 2 * base.seconds);
  CHECK(brief.seconds > base.seconds);
  CHECK(brief.seconds < slow.seconds);
  CHECK(has_line(slow.faults, "slowed the NIC of embedding-shard-0 (host 2) at 0.000 s"));
  // The slowed host's NIC was the busiest.
  const auto u = slow.net->utilisation();
  CHECK(std::max_element(u.begin(), u.end()) - u.begin() == 2);
}

TEST_CASE("faults: under the wall clock a frozen trainer host is held until the freeze ends") {
  data_files d;
  // 10 passes: about 2 s here, so the first poll (0.2 s) finds trainer 0
  // far from done.
  const auto frozen = run(d, {"--sim.clock=wall", "--train.epochs=10", "--faults.freeze=[trainer-0@0s+1.5s]"});
  CHECK(frozen.examples == 80000);
  CHECK(has_line(frozen.faults, "froze trainer-0 (host 0)"));
  CHECK(has_line(frozen.faults, "thawed host 0"));
  // Trainer 0 ran nothing for 1.5 s (its batches wait in the transport).
  CHECK(frozen.seconds >= 1.5);
}

} // namespace faults_test
