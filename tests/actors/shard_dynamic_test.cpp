// embedding_shard with dynamic tables (model.embedding=dynamic) under the
// deterministic scheduler: admission on the shard, zeros for ids without a
// row, pushes to existing rows only, ownership by model::id_owner, the
// counters and the save; and worker_batch's (table, id) keys.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "actors/worker_batch.hpp"
#include "model/shard_layout.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/shard_save.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;

namespace {

std::vector<float> slice(const float_blob& rows, std::size_t i) {
  return {rows.data() + i * 4, rows.data() + (i + 1) * 4};
}

using test::bytes_of;

using test::shard_state;

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard, dynamic tables: admission, zeros, pushes to rows only") {
  auto shard = sys.spawn(embedding_shard, test::small_dynamic_shard_config());
  const auto mine = test::ids_owned(1, 3), other = test::ids_owned(0, 1);
  const std::uint64_t a = mine[0], b = mine[1], c = mine[2];
  const std::vector<float> zero(4, 0.0f);

  // First sight of a (table 0) and b (table 1): no row yet, zeros.
  auto r1 = request<embedding_rows>(shard, lookup_atom::value, test::pair_lookup(1, {0, a, 1, b}));
  REQUIRE(r1);
  REQUIRE(r1->rows.size() == 2 * 4);
  CHECK(slice(r1->rows, 0) == zero);
  CHECK(slice(r1->rows, 1) == zero);
  // Second sight of a: admitted, with the row the sequential engine's table
  // gives id a (seed 7, table 0, bound sqrt(1 / 24)).
  auto r2 = request<embedding_rows>(shard, lookup_atom::value, test::pair_lookup(2, {0, a}));
  REQUIRE(r2);
  model::dynamic_settings s = *test::small_dynamic_shard_config().dynamic;
  s.admit_after = 1;
  s.max_rows = 24; // the whole table (init_rows 0: its bound is the same sqrt(1 / 24))
  s.init_rows = 0;
  model::dynamic_table seq(s, 4, 1, 7, 0);
  const auto slot = seq.train_lookup(a, 0);
  CHECK(slice(r2->rows, 0) == std::vector<float>(seq.row(slot), seq.row(slot) + 4));
  CHECK(slice(r2->rows, 0) != zero);

  // A push of a (has a row) and of c in table 1 (never seen, no row): a
  // changes, c gets no row (the dump holds a alone).
  embedding_grads g;
  g.keys.values = {0, a, 1, c};
  g.grads.values = {1, 1, 1, 1, 2, 2, 2, 2};
  self->send(shard, push_atom::value, g);
  run();
  auto d = request<embedding_grads>(shard, dump_atom::value, ids_atom::value);
  REQUIRE(d);
  REQUIRE(d->keys.values == std::vector<std::uint64_t>{0, a});
  REQUIRE(d->grads.size() == 4);
  for (std::size_t j = 0; j < 4; ++j) // row-wise Adagrad, lr 0.1: a step against the gradient
    CHECK(d->grads.values[j] < r2->rows.values[j]);

  // Counters: rows per table 1, 0; then admissions 1, evictions 0, expired
  // 0, lookups 3 (a, b, a), missing 2 (the first sights), bytes > 0.
  auto k = request<key_blob>(shard, stats_atom::value, ids_atom::value);
  REQUIRE(k);
  REQUIRE(k->size() == 2 + 6);
  CHECK(k->values[0] == 1);
  CHECK(k->values[1] == 0);
  CHECK(k->values[2] == 1);
  CHECK(k->values[3] == 0);
  CHECK(k->values[5] == 3);
  CHECK(k->values[6] == 2);
  CHECK(k->values[7] > 0);

  // An id of shard 0 and an odd number of words are refused, naming why.
  auto foreign = request<embedding_rows>(shard, lookup_atom::value, test::pair_lookup(3, {0, other[0]}));
  REQUIRE(!foreign);
  CHECK(context_of(foreign.error()).find("belongs to shard 0") != std::string::npos);
  auto odd = request<embedding_rows>(shard, lookup_atom::value, test::pair_lookup(4, {0, a, 1}));
  REQUIRE(!odd);
  CHECK(context_of(odd.error()).find("(table, id) pairs") != std::string::npos);
  // The hashed dump is refused: the tables are dynamic.
  CHECK(!request<float_blob>(shard, dump_atom::value));

  // The save writes dynamic-1.bin.
  const auto dir = std::filesystem::temp_directory_path() / "ss_shard_dynamic_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto saved = test::save(*this, shard, dir.string());
  REQUIRE(saved);
  CHECK(saved->name == "dynamic-1.bin");
  CHECK(std::filesystem::exists(dir / "dynamic-1.bin"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("worker_batch with dynamic tables: (table, id) keys routed by id_owner") {
  model::arch a;
  a.num_dense = 1;
  a.num_tables = 2;
  a.rows_per_table = 10;
  a.dim = 4;
  const auto s0 = test::ids_owned(0, 2), s1 = test::ids_owned(1, 1);
  // 3 examples x 2 tables: id s0[0] in both tables (two rows), s1[0] twice
  // in table 1 (one row), s0[1] once.
  example_batch b;
  b.num_dense = 1;
  b.num_cat = 2;
  b.labels.values = {0, 1, 0};
  b.dense.values = {0, 0, 0};
  b.cat.values = {s0[0], s0[0], s0[1], s1[0], s0[0], s1[0]};
  REQUIRE(actors::worker_batch::validate(b, a).empty());
  actors::worker_batch w;
  w.prepare(0, std::move(b), a, 3, true);
  CHECK(w.num_unique() == 4); // (0, s0[0]), (1, s0[0]), (0, s0[1]), (1, s1[0])
  std::vector<std::uint64_t> k0, k1, k2;
  w.shard_keys(0, k0);
  w.shard_keys(1, k1);
  w.shard_keys(2, k2);
  CHECK(k0 == std::vector<std::uint64_t>{0, s0[0], 1, s0[0], 0, s0[1]});
  CHECK(k1 == std::vector<std::uint64_t>{1, s1[0]});
  CHECK(k2.empty());
  CHECK(w.missing() == 2); // shards 0 and 1 answer; 2 has no keys
}

namespace {

// The admission sketches and counters a shard of `cfg` would have saved
// after seeing id x once in table 0 and admitting 5 ids there.
checkpoint::shard_counters counted_once(const actors::embedding_shard_config& cfg,
                                        std::uint64_t x, std::uint64_t width_change = 0) {
  auto d = *cfg.dynamic;
  d.max_rows <<= width_change; // a sketch of another width
  model::dynamic_tables t(cfg.num_tables, d, cfg.dim, cfg.optimizer.state_per_row(cfg.dim),
                          cfg.model_seed);
  t.table(0).sketch().add(x);
  t.table(0).mutable_stats().admissions = 5;
  return checkpoint::counters_of(t, cfg.shard, cfg.num_shards);
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard, dynamic tables: a resumed shard takes its own admission counts") {
  auto cfg = test::small_dynamic_shard_config(); // admit-after 2
  const std::uint64_t x = test::ids_owned(1, 1)[0];
  auto admissions_after_one_lookup = [&](const actors::embedding_shard_config& c) {
    auto shard = sys.spawn(embedding_shard, c);
    auto r = request<embedding_rows>(shard, lookup_atom::value, test::pair_lookup(1, {0, x}));
    REQUIRE(r);
    auto k = request<key_blob>(shard, stats_atom::value, ids_atom::value);
    REQUIRE(k);
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    // table 0's rows, and the admissions (after both tables' rows)
    return std::pair<std::uint64_t, std::uint64_t>{k->values[0], k->values[2]};
  };
  // Afresh: x's first occurrence gets no row.
  CHECK(admissions_after_one_lookup(cfg) == std::pair<std::uint64_t, std::uint64_t>{0, 0});
  // With the saved sketch that saw x once: this lookup is its second, x is
  // admitted, and the counter goes on from the saved 5.
  auto resumed = cfg;
  resumed.initial_counters = counted_once(cfg, x);
  CHECK(admissions_after_one_lookup(resumed) == std::pair<std::uint64_t, std::uint64_t>{1, 6});
  // A sketch of another size (another embedding.max-rows) is not taken.
  auto other = cfg;
  other.initial_counters = counted_once(cfg, x, 4);
  REQUIRE(other.initial_counters->width != resumed.initial_counters->width);
  CHECK(admissions_after_one_lookup(other) == std::pair<std::uint64_t, std::uint64_t>{0, 0});
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard, dynamic tables: a resumed shard's clock goes on after its rows") {
  // A checkpoint of a run 50 000 examples in: row a (table 0) last used at
  // 49 990, row b (table 1) at 50 000. With ttl 100 and batches of 10, the
  // shard's clock must go on from there: a clock from 0 would make
  // now - last wrap and expire both rows at the first sweep.
  auto cfg = test::small_dynamic_shard_config();
  cfg.dynamic->ttl = 100;
  cfg.batch_size = 10;
  const std::size_t spr = cfg.optimizer.state_per_row(cfg.dim);
  auto full = std::make_shared<model::dynamic_tables>(cfg.num_tables, *cfg.dynamic, cfg.dim, spr,
                                                      cfg.model_seed);
  const auto mine = test::ids_owned(1, 2);
  const std::uint64_t a = mine[0], b = mine[1];
  const std::vector<float> w(4, 0.5f), st(spr, 0.0f);
  full->table(0).insert_row({a, 49990, 3}, w.data(), st.data());
  full->table(1).insert_row({b, 50000, 1}, w.data(), st.data());
  cfg.initial_dynamic = full;
  auto shard = sys.spawn(embedding_shard, cfg);
  // a reads its restored row (admit-after 2 would give a new id zeros).
  auto r = request<embedding_rows>(shard, lookup_atom::value, test::pair_lookup(1, {0, a}));
  REQUIRE(r);
  CHECK(slice(r->rows, 0) == w);
  auto k = request<key_blob>(shard, stats_atom::value, ids_atom::value);
  REQUIRE(k);
  CHECK(k->values[0] == 1); // rows of table 0
  CHECK(k->values[1] == 1); // rows of table 1
  CHECK(k->values[2 + 2] == 0); // expired
  // Ten more lookups of a (100 examples): b, unseen since 50 000, passes
  // its ttl and expires; a stays.
  for (std::uint64_t i = 0; i < 10; ++i)
    REQUIRE(request<embedding_rows>(shard, lookup_atom::value, test::pair_lookup(2 + i, {0, a})));
  k = request<key_blob>(shard, stats_atom::value, ids_atom::value);
  REQUIRE(k);
  CHECK(k->values[0] == 1);
  CHECK(k->values[1] == 0);
  CHECK(k->values[2 + 2] == 1);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard, dynamic tables: a cut's file is written by a thread from a "
                  "copy of the tables taken at the alignment") {
  const auto one = test::one_row_dynamic_shard();
  const std::uint64_t a = one.id;
  const auto& w = one.w;
  auto shard = sys.spawn(embedding_shard, one.cfg);
  namespace fs = std::filesystem;
  const auto base = fs::temp_directory_path() / "ss_shard_dynamic_cut_test";
  fs::remove_all(base);
  fs::create_directories(base / "save");
  fs::create_directories(base / "cut");
  // The tables as they are now, as the shard's save writes them.
  REQUIRE(test::save(*this, shard, (base / "save").string()));
  REQUIRE(fs::exists(base / "save" / "dynamic-1.bin"));
  // Cut 1 over one worker: open until that worker's marker.
  auto cut = request_async<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1},
                                           (base / "cut").string(), std::uint32_t{1});
  run();
  auto& st = shard_state(shard);
  REQUIRE(st.cut.has_value());
  CHECK_FALSE(st.cut->aligned);
  sys.spawn([](caf::event_based_actor* self, decltype(shard) to) {
    self->send(to, cut_atom::value, std::uint64_t{1});
  }, shard);
  while (!(st.cut && st.cut->aligned) && run_once()) {
  }
  // The marker's handler has aligned the cut and returned: the file is
  // written by a thread and the cut stays open until it reports (a write
  // within the handler would have replied and closed it there).
  REQUIRE(st.cut.has_value());
  CHECK(st.cut->aligned);
  REQUIRE(st.dynamic_writer);
  // The shard goes on: a push of row a now changes the tables, not the file.
  embedding_grads g;
  g.keys.values = {0, a};
  g.grads.values = {1, 1, 1, 1};
  self->send(shard, push_atom::value, g);
  st.dynamic_writer->thread.join(); // written, and done(1) sent: nothing else sends now
  run();
  REQUIRE(cut->done());
  const auto f = cut->get();
  REQUIRE(f);
  CHECK(f->name == "dynamic-1.bin");
  CHECK(f->bytes == fs::file_size(base / "cut" / "dynamic-1.bin"));
  CHECK(bytes_of(base / "cut" / "dynamic-1.bin") == bytes_of(base / "save" / "dynamic-1.bin"));
  CHECK_FALSE(st.cut.has_value());
  CHECK_FALSE(st.dynamic_writer);
  auto d = request<embedding_grads>(shard, dump_atom::value, ids_atom::value);
  REQUIRE(d);
  REQUIRE(d->keys.values == std::vector<std::uint64_t>{0, a});
  CHECK(slice(d->grads, 0) != w); // the push reached the tables
  fs::remove_all(base);
}
