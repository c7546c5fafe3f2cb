// embedding_shard with dynamic tables and dct.mp under the deterministic
// scheduler (model/dct_mp_dynamic.hpp): a thresholded lookup of (table, id)
// pairs replies the thresholded rows with row marks, absent for an id
// without a row and fresh for a row the asking worker was not served since
// its admission (again after an eviction and re-admission); a thresholded
// push changes the rows as the plain push it stands for.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "model/dct_codec.hpp"
#include "model/dct_mp_dynamic.hpp"
#include "model/shard_layout.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;

namespace {

// Shard 1 of 3, 2 tables, dim 4, SGD (w -= 0.1 g): an id gets a row at its
// 2nd sight, at most 8 rows a table, evicted when unseen for 16 examples;
// dct.mp keeps every entry (keep 1).
actors::embedding_shard_config config() {
  auto c = test::small_dynamic_shard_config();
  c.optimizer = {model::sparse_optimizer_kind::sgd, 0.1f, 1e-8f};
  c.dynamic->ttl = 16;
  c.dct.mp = true;
  c.dct.mp_keep = 1.0;
  return c;
}

// One worker: every lookup_request it is sent goes to the shard as a
// thresholded lookup from it; the replies' marks land in *marks.
using marks_log = std::vector<std::vector<std::uint32_t>>;
caf::behavior one_worker(caf::event_based_actor* self, actors::embedding_shard_actor shard,
                         std::shared_ptr<marks_log> marks) {
  return {[=](lookup_request& r) {
    const std::size_t n = r.keys.size() / 2;
    self->request(shard, caf::infinite, lookup_atom::value, sparse_atom::value, std::move(r))
      .then(
        [=](sparse_rows& x) {
          model::row_marks m;
          REQUIRE_FALSE(model::decode_row_marks(x.marks.data(), x.marks.size(), n, m));
          marks->push_back(m.marked);
        },
        [=](caf::error&) { marks->push_back({999}); });
  }};
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "dct shard, dynamic tables: row marks across admission and eviction") {
  auto shard = sys.spawn(embedding_shard, config());
  auto log0 = std::make_shared<marks_log>(), log1 = std::make_shared<marks_log>();
  auto w0 = sys.spawn(one_worker, shard, log0);
  auto w1 = sys.spawn(one_worker, shard, log1);
  const auto mine = test::ids_owned(1, 3);
  const std::uint64_t a = mine[0], b = mine[1];
  auto look = [&](const caf::actor& w, std::vector<std::uint64_t> keys) {
    self->send(w, test::pair_lookup(1, std::move(keys)));
    run();
  };

  // a's first sight: no row (mark 2 x 0: row 0 absent); b, also new: absent.
  look(w0, {0, a, 1, b});
  REQUIRE(log0->size() == 1);
  CHECK(log0->back() == std::vector<std::uint32_t>{0, 2});
  // a's second sight: admitted, new to worker 0 (2 x 0 + 1); b's second: row 1 fresh too.
  look(w0, {0, a, 1, b});
  CHECK(log0->back() == std::vector<std::uint32_t>{1, 3});
  // Worker 0 again: no marks; worker 1: both rows new to it.
  look(w0, {0, a, 1, b});
  CHECK(log0->back().empty());
  look(w1, {1, b, 0, a});
  REQUIRE(log1->size() == 1);
  CHECK(log1->back() == std::vector<std::uint32_t>{1, 3});

  // A thresholded push at keep 1 is the plain push it stands for.
  auto before = request<embedding_grads>(shard, dump_atom::value, ids_atom::value);
  REQUIRE(before);
  model::sparse_vector g;
  g.size = 4;
  g.index = {0, 3};
  g.value = {1.0f, -2.0f};
  sparse_grads sg;
  sg.keys.values = {0, a};
  sg.payload.values = model::encode(g);
  self->send(shard, push_atom::value, sg);
  run();
  auto after = request<embedding_grads>(shard, dump_atom::value, ids_atom::value);
  REQUIRE(after);
  REQUIRE(after->keys.values == before->keys.values);
  std::size_t row = 0;
  while (!(after->keys.values[2 * row] == 0 && after->keys.values[2 * row + 1] == a))
    ++row;
  const float* w = before->grads.data() + row * 4;
  const float* x = after->grads.data() + row * 4;
  CHECK(x[0] == w[0] - 0.1f * 1.0f);
  CHECK(x[1] == w[1]);
  CHECK(x[3] == w[3] - 0.1f * -2.0f);

  // 20 lookups of another id (from worker 1) leave a unseen for more than
  // the ttl of 16 examples (a lookup is one example here): a is evicted.
  for (int k = 0; k < 20; ++k)
    look(w1, {0, mine[2]});
  auto gone = request<embedding_grads>(shard, dump_atom::value, ids_atom::value);
  REQUIRE(gone);
  bool held = false;
  for (std::size_t i = 0; i < gone->keys.size(); i += 2)
    held = held || (gone->keys.values[i] == 0 && gone->keys.values[i + 1] == a);
  REQUIRE_FALSE(held);
  // a again (its count in the sketch admits it at once): a fresh row to both workers.
  look(w0, {0, a});
  CHECK(log0->back() == std::vector<std::uint32_t>{1});
  look(w1, {0, a});
  CHECK(log1->back() == std::vector<std::uint32_t>{1});
  look(w0, {0, a});
  CHECK(log0->back().empty());
}
