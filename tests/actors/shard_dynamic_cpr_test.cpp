// CPR saves of an embedding shard's dynamic tables (model.embedding=dynamic
// with recovery.mode=partial; checkpoint/cpr_dynamic.hpp), on scheduler
// threads (the wall clock's background writer): a restarted shard gets back
// exactly the ids and rows of the newest save, full save plus partial one,
// without the ids evicted before it or admitted after it.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/embedding_shard.hpp"
#include "messages/messages.hpp"
#include "messages/registry.hpp"
#include "model/shard_layout.hpp"
#include "shard_config.hpp"
#include "tests/actors/eventually.hpp"

namespace {

using namespace std::chrono_literals;
using namespace messages;

using test::eventually;

struct shard_client {
  caf::actor_system& sys;
  caf::scoped_actor& self;

  embedding_rows lookup(const actors::embedding_shard_actor& s, std::vector<std::uint64_t> keys) {
    lookup_request r;
    r.batch = 1;
    r.keys.values = std::move(keys);
    embedding_rows out;
    self->request(s, 3s, lookup_atom::value, r)
      .receive([&](embedding_rows& x) { out = std::move(x); },
               [&](caf::error& e) { FAIL("lookup: " << sys.render(e)); });
    return out;
  }
  void push(const actors::embedding_shard_actor& s, std::vector<std::uint64_t> keys, float g) {
    embedding_grads p;
    p.grads.values.assign(keys.size() / 2 * 4, g);
    p.keys.values = std::move(keys);
    self->send(s, push_atom::value, p);
  }
  embedding_grads dump(const actors::embedding_shard_actor& s) {
    embedding_grads out;
    self->request(s, 3s, dump_atom::value, ids_atom::value)
      .receive([&](embedding_grads& x) { out = std::move(x); },
               [&](caf::error& e) { FAIL("dump: " << sys.render(e)); });
    return out;
  }
};

// Whether the dump holds (table, id).
bool holds(const embedding_grads& d, std::uint64_t t, std::uint64_t id) {
  for (std::size_t i = 0; i + 1 < d.keys.size(); i += 2)
    if (d.keys.values[i] == t && d.keys.values[i + 1] == id)
      return true;
  return false;
}

} // namespace

TEST_CASE("cpr shard, dynamic tables: a restarted shard gets back the newest save's ids and "
          "rows (full + partial), not the ids evicted before it or admitted after it") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ss-cpr-dyn-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  caf::actor_system_config sc;
  register_messages(sc);
  caf::actor_system sys{sc};
  caf::scoped_actor self{sys};
  shard_client client{sys, self};

  // Shard 1 of 3, 2 tables of at most 4 rows (admitted at first sight), mfu
  // with fraction 1 (a partial save holds every row updated since the last)
  // and only the first save full.
  auto c = test::small_shard_config();
  c.dynamic = model::dynamic_settings{};
  c.dynamic->admit_after = 1;
  c.dynamic->max_rows = 4;
  c.dynamic->init_rows = 12;
  c.model_seed = 7;
  c.cpr.folder = (dir / "embedding-1").string();
  c.cpr.policy = checkpoint::cpr_policy::mfu;
  c.cpr.fraction = 1.0;
  c.cpr.full_every = 0;
  c.cpr.interval = std::chrono::milliseconds(20);
  auto counters = std::make_shared<actors::cpr_counters>();
  c.cpr.counters = counters;
  const auto m = test::ids_owned(1, 8);

  auto a = sys.spawn(actors::embedding_shard, c);
  // Table 0 full with m0..m3, table 1 holds m4; a push arms the first save.
  client.lookup(a, {0, m[0], 0, m[1], 0, m[2], 0, m[3], 1, m[4]});
  client.push(a, {0, m[0], 0, m[1], 0, m[2], 0, m[3], 1, m[4]}, 0.5f);
  REQUIRE(eventually([&] { return counters->saves >= 1; }));
  CHECK(counters->full_saves == 1);
  // m5 and m6 come to the full table 0: each evicts one of m0..m3 (the
  // least used, then lowest id); one push updates them and m4 (table 1).
  client.lookup(a, {0, m[5], 0, m[6]});
  client.push(a, {0, m[5], 0, m[6], 1, m[4]}, -0.25f);
  REQUIRE(eventually([&] { return counters->saves >= 2; }));
  CHECK(counters->full_saves == 1); // the second is partial
  const auto saved = client.dump(a); // the tables as the second save took them
  REQUIRE(saved.keys.size() == 2 * 5);
  CHECK(holds(saved, 0, m[5]));
  CHECK(holds(saved, 0, m[6]));
  CHECK(holds(saved, 1, m[4]));
  const int evicted = !holds(saved, 0, m[0]) + !holds(saved, 0, m[1]) +
                      !holds(saved, 0, m[2]) + !holds(saved, 0, m[3]);
  CHECK(evicted == 2);
  // m7 is admitted after the save (a lookup alone: no update, no save).
  const auto m7 = client.lookup(a, {1, m[7]});
  CHECK(holds(client.dump(a), 1, m[7]));
  CHECK(counters->saves == 2);
  self->send_exit(a, caf::exit_reason::kill);
  self->wait_for(a);

  // The restart: the chain (the full save, then the partial one) is loaded.
  auto b = sys.spawn(actors::embedding_shard, c);
  std::uint64_t saves = 0;
  self->request(b, 3s, recover_atom::value)
    .receive([&](std::uint64_t, std::uint64_t n, std::int64_t, std::int64_t) { saves = n; },
             [&](caf::error& e) { FAIL("recover: " << sys.render(e)); });
  CHECK(saves == 2);
  CHECK(counters->loads == 1);
  const auto back = client.dump(b);
  CHECK(back.keys.values == saved.keys.values); // the same ids (m7 not among them)
  CHECK(back.grads.values == saved.grads.values); // the same rows, to the bit
  // m7 reads its row again once admitted again: its initial one (the same
  // from (seed, table, id) wherever it is admitted).
  CHECK(client.lookup(b, {1, m[7]}).rows.values == m7.rows.values);

  self->send_exit(b, caf::exit_reason::user_shutdown);
  self->wait_for(b);
  fs::remove_all(dir);
}
