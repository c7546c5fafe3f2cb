// The roles' configurations (cluster_plan.hpp), checks of what arrives from
// the wire in multi-node mode (role_plan_checks.hpp),
// the up-front memory estimate, and the empty-data-set error.
#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

#include "cluster/cluster_plan.hpp"
#include "cluster/role_plan_checks.hpp"
#include "engine/input.hpp"
#include "cluster/memory_estimate.hpp"

using messages::role_plan;
using messages::spawned_roles;

namespace {

runtime::train_config three_by_two() {
  runtime::train_config c;
  c.cluster.trainers = 3;
  c.cluster.embedding_shards = 2;
  c.cluster.dense_shards = 1;
  c.sync.algorithm = model::sync_algorithm::s_easgd;
  return c;
}

} // namespace

TEST_CASE("role plan from the wire: indices within their counts, handles present") {
  caf::actor_system_config sc;
  caf::actor_system sys{sc};
  // An argument, so that CAF 0.17 does not bind a null tuple (see test_fixture.hpp).
  auto a = caf::actor_cast<caf::strong_actor_ptr>(
    sys.spawn([](caf::event_based_actor* self, int) { self->quit(); }, 0));
  REQUIRE(a);
  const auto cfg = three_by_two();
  role_plan p;
  p.embedding_shards = {0, 1};
  p.dense_shards = {0};
  // The node of every trainer (the roles' authority, actors/authority.hpp).
  CHECK(runtime::check_role_plan(p, cfg).find("the nodes of 0 trainers, expected 3") !=
        std::string::npos);
  p.trainer_nodes.assign(3, sys.node());
  CHECK(runtime::check_role_plan(p, cfg) == "");
  p.embedding_shards = {2}; // of 2
  CHECK(runtime::check_role_plan(p, cfg).find("embedding shard index 2 is out of range "
                                              "(cluster.embedding-shards = 2)") !=
        std::string::npos);
  p.embedding_shards = {1, 1};
  CHECK(runtime::check_role_plan(p, cfg).find("listed twice") != std::string::npos);
  p.embedding_shards = {};
  p.dense_shards = {1}; // of 1
  CHECK(runtime::check_role_plan(p, cfg).find("dense shard index 1") != std::string::npos);
  auto ma = cfg;
  ma.sync.algorithm = model::sync_algorithm::s_ma; // no dense shards at all
  p.dense_shards = {0};
  CHECK(runtime::check_role_plan(p, ma).find("dense shards without EASGD") != std::string::npos);
  // Trainers need every shard's handle, none null.
  p.dense_shards = {};
  p.trainers = {2};
  p.shards = {a};
  p.dense = {a};
  CHECK(runtime::check_role_plan(p, cfg).find("1 embedding shard handle(s), expected 2") !=
        std::string::npos);
  p.shards = {a, nullptr};
  CHECK(runtime::check_role_plan(p, cfg).find("embedding shard handle 1 is null") !=
        std::string::npos);
  p.shards = {a, a};
  CHECK(runtime::check_role_plan(p, cfg) == "");
  p.trainers = {3}; // of 3
  CHECK(runtime::check_role_plan(p, cfg).find("trainer index 3 is out of range") !=
        std::string::npos);
  // The coordinator's check of a reply: one non-null handle per index.
  p.trainers = {0, 2};
  spawned_roles r;
  r.trainers = {a};
  CHECK(runtime::check_spawned(p, r).find("1 trainer handle(s), expected 2") != std::string::npos);
  r.trainers = {a, nullptr};
  CHECK(runtime::check_spawned(p, r).find("trainer handle 1 is null") != std::string::npos);
  r.trainers = {a, a};
  CHECK(runtime::check_spawned(p, r) == "");
}

TEST_CASE("memory estimate: an impossible table size names the key") {
  auto cfg = three_by_two();
  // 26 tables x 100000 rows x (16 + 1) floats x 4 B = 176.8 MB
  const auto m = runtime::estimate_memory(cfg);
  CHECK(m.embedding_bytes == doctest::Approx(26.0 * 100000 * 17 * 4));
  CHECK(m.dense_bytes > 0);
  CHECK_FALSE(runtime::check_memory(cfg, 24.0 * (1ull << 30)));
  cfg.arch.rows_per_table = 1'000'000'000'000ull;
  auto err = runtime::check_memory(cfg, 24.0 * (1ull << 30));
  REQUIRE(err);
  CHECK(err->find("option 'model.rows-per-table' = 1000000000000") == 0);
  CHECK(err->find("more than this machine's 24.0 GiB") != std::string::npos);
  CHECK(err->find("PiB") != std::string::npos); // 1.77e15 B = 1.6 PiB
  CHECK_FALSE(runtime::check_memory(cfg, 0)); // unknown memory: no check
}

TEST_CASE("an empty data set is an error naming the files") {
  CHECK(runtime::empty_set_error("training", {"a.tsv", "b.tsv"}, 3) ==
        "the training set is empty: no valid example in 'a.tsv', 'b.tsv' (3 malformed lines "
        "skipped)");
  CHECK(runtime::empty_set_error("eval", {"e.tsv"}, 1) ==
        "the eval set is empty: no valid example in 'e.tsv' (1 malformed line skipped)");
}

TEST_CASE("a node's share of the roles is configured as in the whole cluster") {
  auto cfg = three_by_two();
  cfg.dct.dp = true; // the syncers' origin: the initial dense parameters
  cfg.train.max_examples = 1000;
  const model::dlrm net(cfg.arch);
  const auto whole = runtime::configure_roles(cfg, net, nullptr, runtime::role_choice::all(cfg));
  REQUIRE(whole.embedding_shards.size() == 2);
  REQUIRE(whole.dense_shards.size() == 1);
  REQUIRE(whole.trainers.size() == 3);
  const runtime::role_choice node{{1}, {0}, {2}, true};
  const auto share = runtime::configure_roles(cfg, net, nullptr, node);
  REQUIRE(share.embedding_shards.size() == 1);
  REQUIRE(share.dense_shards.size() == 1);
  REQUIRE(share.trainers.size() == 1);
  CHECK(share.init == whole.init);
  const auto& e = share.embedding_shards[0];
  CHECK(e.shard == 1);
  CHECK(e.seed == whole.embedding_shards[1].seed);
  CHECK(e.seed != whole.embedding_shards[0].seed);
  CHECK(e.num_shards == 2);
  CHECK(share.dense_shards[0].initial == whole.dense_shards[0].initial);
  CHECK(share.dense_shards[0].offset == whole.dense_shards[0].offset);
  const auto& t = share.trainers[0];
  const auto& w = whole.trainers[2];
  CHECK(t.trainer == 2);
  CHECK(t.host == w.host);
  CHECK(t.host == share.place.host_of_trainer(2));
  CHECK(t.reader.options.part == 2);
  CHECK(t.reader.options.num_parts == 3);
  CHECK(t.reader.max_examples == w.reader.max_examples);
  CHECK(t.reader.max_examples == (1000 + 2) / 3);
  CHECK(t.syncer.dct_origin == whole.init);
  CHECK(t.syncer.dense_ranges.size() == 1);
  CHECK(t.syncer.reform_on_loss); // the node's choice
  CHECK_FALSE(w.syncer.reform_on_loss); // faults.kill names no trainer
  // The peers' handles come at spawn.
  CHECK(t.shards.empty());
  CHECK(t.syncer.dense_shards.empty());
  runtime::trainer_peers peers;
  peers.shards.resize(2);
  peers.dense.resize(1);
  auto bound = t;
  runtime::bind_peers(bound, peers);
  CHECK(bound.shards.size() == 2);
  CHECK(bound.syncer.dense_shards.size() == 1);
}

TEST_CASE("role_choice::all: dense shards only with EASGD") {
  auto cfg = three_by_two();
  cfg.sync.algorithm = model::sync_algorithm::s_ma;
  const auto all = runtime::role_choice::all(cfg);
  CHECK(all.embedding_shards == std::vector<std::uint32_t>{0, 1});
  CHECK(all.dense_shards.empty());
  CHECK(all.trainers == std::vector<std::uint32_t>{0, 1, 2});
  runtime::fault_event kill;
  kill.what = runtime::fault_event::action::kill;
  kill.kind = runtime::fault_event::role::trainer;
  cfg.sim.faults.push_back(kill);
  CHECK(runtime::role_choice::all(cfg).reform_on_loss);
}
