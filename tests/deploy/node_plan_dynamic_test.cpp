// A node's embedding shards from the coordinator's plan with
// model.embedding=dynamic (deploy/node_plan.hpp): the plan's INI text, as it
// crosses the wire, gives each shard dynamic tables of its share of
// embedding.max-rows; a shard admits, evicts and counts the ids it owns and
// refuses the others'. The multi-node run end to end is
// tests/system/multinode_dynamic_test.sh.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "deploy/node_plan.hpp"
#include "model/shard_layout.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;

namespace {

// The effective INI a coordinator sends (tools/node_command.cpp): one trainer
// node t0, both embedding shards on coord; 8 rows a table, so 4 a shard.
const char* dynamic_ini = R"([deploy]
nodes = [coord=127.0.0.1:7000, t0=127.0.0.1:7001]
coordinator = coord
trainers = [t0]
embedding-shards = [coord, coord]
dense-shards = [coord]
insecure = true
[cluster]
trainers = 1
embedding-shards = 2
dense-shards = 1
[model]
arch = "small"
rows-per-table = 64
embedding = "dynamic"
[embedding]
max-rows = 8
)";

// The first n ids >= 1 that shard `shard` of 2 owns.
std::vector<std::uint64_t> ids_of(std::uint64_t shard, std::size_t n) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t id = 1; out.size() < n; ++id)
    if (model::id_owner(id, 2) == shard)
      out.push_back(id);
  return out;
}

lookup_request pairs(std::uint64_t batch, std::uint64_t table,
                     const std::vector<std::uint64_t>& ids) {
  lookup_request r;
  r.batch = batch;
  for (auto id : ids)
    r.keys.values.insert(r.keys.values.end(), {table, id});
  return r;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "node plan: dynamic tables on the node's shards") {
  role_plan plan;
  plan.config_ini = dynamic_ini;
  plan.embedding_shards = {0, 1};
  plan.trainer_nodes = {caf::node_id{}}; // one trainer (its node is not needed here)
  runtime::prepared_plan p;
  const auto err = runtime::prepare(plan, p);
  REQUIRE_MESSAGE(!err, err.value_or(""));
  CHECK(p.cfg.embedding.dynamic);
  auto roles = runtime::spawn_roles(self.ptr(), p);
  REQUIRE(roles.embedding_shards.size() == 2);
  auto s0 = caf::actor_cast<actors::embedding_shard_actor>(roles.embedding_shards[0]);
  auto s1 = caf::actor_cast<actors::embedding_shard_actor>(roles.embedding_shards[1]);
  const std::size_t T = 26; // the small arch's tables
  // Counters: rows per table, then admissions, evictions, expired, lookups,
  // missing, bytes. Fresh tables hold nothing.
  auto fresh = request<key_blob>(s0, stats_atom::value, ids_atom::value);
  REQUIRE(fresh);
  REQUIRE(fresh->size() == T + 6);
  CHECK(fresh->values[0] == 0);
  // Six ids of table 3 at shard 0 (admit-after 1): its share is 4 rows, so
  // the first four get rows and the last two none (a full table evicts only
  // rows the current lookup does not use), and they read zeros.
  const auto six = ids_of(0, 6);
  auto rows = request<embedding_rows>(s0, lookup_atom::value, pairs(1, 3, six));
  REQUIRE(rows);
  REQUIRE(rows->rows.size() == 6 * 16); // dim 16 (small)
  for (std::size_t j = 0; j < 16; ++j)
    CHECK(rows->rows.values[5 * 16 + j] == 0.0f);
  auto st = request<key_blob>(s0, stats_atom::value, ids_atom::value);
  REQUIRE(st);
  CHECK(st->values[3] == 4); // table 3's rows: max-rows 8 / 2 shards
  CHECK(st->values[T + 0] == 4); // admissions
  CHECK(st->values[T + 3] == 6); // lookups
  CHECK(st->values[T + 4] == 2); // of ids without a row
  // A later lookup of two new ids evicts two rows the first one used (one
  // at a time: max-rows / 32 rounds up to 1) and admits both.
  const auto eight = ids_of(0, 8);
  REQUIRE(request<embedding_rows>(s0, lookup_atom::value, pairs(2, 3, {eight[6], eight[7]})));
  st = request<key_blob>(s0, stats_atom::value, ids_atom::value);
  REQUIRE(st);
  CHECK(st->values[3] == 4);
  CHECK(st->values[T + 0] == 6); // admissions
  CHECK(st->values[T + 1] == 2); // evictions
  // The dump names every row by (table, id), dim floats each.
  auto dump = request<embedding_grads>(s0, dump_atom::value, ids_atom::value);
  REQUIRE(dump);
  CHECK(dump->keys.size() == 2 * st->values[3]);
  CHECK(dump->grads.size() == 16 * st->values[3]);
  // Shard 1 refuses shard 0's ids, naming the owner.
  auto foreign = request<embedding_rows>(s1, lookup_atom::value, pairs(3, 0, six));
  REQUIRE_FALSE(foreign);
  CHECK(context_of(foreign.error()).find("belongs to shard 0") != std::string::npos);
  for (auto& s : roles.embedding_shards)
    self->send_exit(caf::actor_cast<caf::actor>(s), caf::exit_reason::user_shutdown);
  run();
}
