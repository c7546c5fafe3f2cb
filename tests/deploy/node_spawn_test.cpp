// recovery.mode=full across nodes (deploy/node_spawn.hpp): the rollback's
// plan is the coordinator's effective configuration with checkpoint.resume
// set to the cut, whatever the effective INI said for it, and nothing else
// changed. The rollback end to end is tests/system/multinode_test.sh (4c).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/deploy_config.hpp"
#include "config/options.hpp"
#include "config/train_config.hpp"
#include "deploy/node_agent.hpp"
#include "deploy/node_spawn.hpp"

namespace {

// The coordinator's effective INI, as tools/node_command.cpp makes it: every
// key written, checkpoint.resume among them (empty).
std::string effective(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::add_deploy_options(o);
  REQUIRE(o.parse(args).value_or("") == "");
  return o.effective_ini();
}

const std::vector<std::string> run = {
  "--deploy.nodes=[coord=127.0.0.1:7000, s0=127.0.0.1:7001, t0=127.0.0.1:7002]",
  "--deploy.trainers=[t0]", "--deploy.embedding-shards=[s0]", "--deploy.dense-shards=[coord]",
  "--deploy.insecure=true", "--recovery.mode=full", "--checkpoint.dir=ck", "--cpr.interval=0.5",
  "--train.epochs=3"};

} // namespace

TEST_CASE("the rollback's configuration resumes the cut and changes nothing else") {
  const auto ini = effective(run);
  REQUIRE(ini.find("resume = \"\"") != std::string::npos); // written, so set by the file
  std::string again;
  REQUIRE(runtime::ini_resuming(ini, "ck/ckpt-000000070912", again).value_or("") == "");
  runtime::train_config before, after;
  runtime::deploy_settings d0, d1;
  REQUIRE(runtime::parse_run_config(ini, before, &d0).value_or("") == "");
  REQUIRE(runtime::parse_run_config(again, after, &d1).value_or("") == "");
  CHECK(before.checkpoint.resume.empty());
  CHECK(after.checkpoint.resume == "ck/ckpt-000000070912");
  CHECK(after.recovery.full);
  CHECK(after.train.epochs == 3);
  CHECK(after.checkpoint.dir == "ck");
  CHECK(d1.digest == d0.digest); // the same spec: the nodes' hellos still match
  // A path that needs quoting survives the INI.
  REQUIRE(runtime::ini_resuming(ini, "dir with \"quotes\"; and # marks", again).value_or("") == "");
  REQUIRE(runtime::parse_run_config(again, after, &d1).value_or("") == "");
  CHECK(after.checkpoint.resume == "dir with \"quotes\"; and # marks");
}

TEST_CASE("a configuration that does not parse is named, not resumed") {
  std::string out = "untouched";
  const auto err = runtime::ini_resuming("[checkpoint]\nresum = \"x\"\n", "ck/c", out);
  REQUIRE(err.has_value());
  CHECK(err->find("checkpoint.resum") != std::string::npos);
  CHECK(out == "untouched");
}
