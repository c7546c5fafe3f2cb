// Bounded peer state (issue 40, row 2 / item 2): ids, counts and ranges that
// a peer sends are checked against the plan before they key any state. Each
// case sends an out-of-plan value and checks the refusal (an error of the
// project's enum, or a logged drop for a message without a reply) and that
// nothing changed.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "actors/dense_shard.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/shadow_syncer.hpp"
#include "model/dct_codec.hpp"
#include "tests/actors/dct_exchange.hpp"
#include "tests/actors/syncer_test_util.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using test::change_of;
using test::dct_shard;
using namespace syncer_test;

namespace {

// N replicas of 3 floats each (values do not matter here).
std::vector<replica_ptr> small_replicas(std::uint32_t n) {
  std::vector<replica_ptr> out;
  for (std::uint32_t r = 0; r < n; ++r)
    out.push_back(make_replica({float(r), 1.0f, 2.0f}));
  return out;
}

// The state of a running actor (the test scheduler runs nothing concurrently).
template <class State, class Handle>
State& state_of_actor(const Handle& h) {
  using impl = std::remove_pointer_t<typename Handle::template stateful_pointer<State>>;
  return dynamic_cast<impl&>(*caf::actor_cast<caf::abstract_actor*>(h)).state;
}

// One actor that sends its requests one after another (so each comes from
// the same sender, as a syncer's do) and keeps each outcome.
struct outcomes {
  std::vector<caf::error> errors; // per request: none when it was answered
};

void send_in_turn(caf::event_based_actor* self, actors::dense_shard_actor shard,
                  std::vector<sparse_range> reqs, std::shared_ptr<outcomes> out,
                  std::size_t i = 0) {
  if (i == reqs.size())
    return;
  auto req = reqs[i];
  self->request(shard, caf::infinite, exchange_atom::value, req)
    .then(
      [=](sparse_range&) {
        out->errors.emplace_back();
        send_in_turn(self, shard, reqs, out, i + 1);
      },
      [=](caf::error& e) {
        out->errors.push_back(e);
        send_in_turn(self, shard, reqs, out, i + 1);
      });
}

std::shared_ptr<outcomes> exchanges_from_one_actor(test::actor_fixture& fx,
                                                   const actors::dense_shard_actor& shard,
                                                   std::vector<sparse_range> reqs) {
  auto out = std::make_shared<outcomes>();
  fx.sys.spawn(
    [shard, reqs](caf::event_based_actor* self, std::shared_ptr<outcomes> out) {
      send_in_turn(self, shard, reqs, out);
    },
    out);
  fx.run();
  return out;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "peer bounds: a DCT exchange naming a trainer beyond the plan is refused") {
  auto shard = sys.spawn(actors::dense_shard, dct_shard(2));
  // A 9-byte-class payload per id used to make a mirror of two range-sized
  // vectors for every new id: ids 2 and 2^32 - 1 are not trainers of a job of 2.
  for (std::uint32_t bad : {2u, 0xFFFFFFFFu}) {
    auto r = request<sparse_range>(shard, exchange_atom::value, change_of(bad));
    REQUIRE_FALSE(r);
    CHECK(code_of(r.error()) == errc::bad_request);
    const auto text = context_of(r.error());
    CHECK(text.find("dense-shard-1") != std::string::npos);
    CHECK(text.find("trainer " + std::to_string(bad)) != std::string::npos);
    CHECK(text.find("expected below 2") != std::string::npos);
  }
  CHECK(state_of_actor<actors::dense_shard_state>(shard).mirrors.empty());
  auto c = request<dense_range>(shard, dump_atom::value);
  REQUIRE(c);
  CHECK(c->values.values == std::vector<float>{1, 2, 3, 4}); // unchanged
  // Trainer 1 of 2 is one: mirror (1, 4, 3, 4), d = 0.5 (0, 2, 0, 0).
  auto ok = request<sparse_range>(shard, exchange_atom::value, change_of(1));
  REQUIRE(ok);
  CHECK(state_of_actor<actors::dense_shard_state>(shard).mirrors.size() == 1);
  c = request<dense_range>(shard, dump_atom::value);
  REQUIRE(c);
  CHECK(c->values.values == std::vector<float>{1, 3, 3, 4});
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "peer bounds: a trainer's DCT mirror answers only the actor that made it") {
  auto shard = sys.spawn(actors::dense_shard, dct_shard(2));
  auto first = exchanges_from_one_actor(*this, shard, {change_of(0), change_of(0)});
  REQUIRE(first->errors.size() == 2);
  CHECK_FALSE(first->errors[0]);
  CHECK_FALSE(first->errors[1]); // the same actor again: its own mirror
  const auto& st = state_of_actor<actors::dense_shard_state>(shard);
  REQUIRE(st.mirrors.count(0) == 1);
  const auto mirror = st.mirrors.at(0).mirror();
  const auto centre = st.centre;
  // Another actor speaking for trainer 0 would overwrite its mirror.
  auto other = exchanges_from_one_actor(*this, shard, {change_of(0)});
  REQUIRE(other->errors.size() == 1);
  REQUIRE(other->errors[0]);
  CHECK(code_of(other->errors[0]) == errc::bad_request);
  CHECK(context_of(other->errors[0]).find("trainer 0") != std::string::npos);
  CHECK(st.mirrors.at(0).mirror() == mirror);
  CHECK(st.centre == centre);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "peer bounds: an embedding shard's cut counts no more workers than the job has") {
  actors::embedding_shard_config c;
  c.num_tables = 2;
  c.rows_per_table = 8;
  c.dim = 2;
  c.max_workers = 2; // e.g. 2 trainers x 1 worker
  auto shard = sys.spawn(actors::embedding_shard, c);
  // A cut request that would wait for 3 workers of a job of 2.
  auto r = request<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1}, std::string{"/nonexistent"},
                                   std::uint32_t{3});
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::bad_request);
  CHECK(context_of(r.error()).find("3 workers") != std::string::npos);
  using shard_state = actors::embedding_shard_state;
  CHECK_FALSE(state_of_actor<shard_state>(shard).cut.has_value());
  // Markers of cut 1 from 3 different actors: the third is not a worker of the job.
  for (int i = 0; i < 3; ++i) {
    // (The shard goes in as an argument: CAF 0.17 spawning a function with
    // none dereferences an empty argument tuple, which UBSan reports.)
    auto marker = sys.spawn(
      [](caf::event_based_actor* self, decltype(shard) to) {
        self->send(to, cut_atom::value, std::uint64_t{1});
      },
      shard);
    run();
  }
  REQUIRE(state_of_actor<shard_state>(shard).cut.has_value());
  CHECK(state_of_actor<shard_state>(shard).cut->marked.size() == 2);
  // Ends from 3 more actors: at most 2 are kept.
  for (int i = 0; i < 3; ++i) {
    sys.spawn([](caf::event_based_actor* self, decltype(shard) to) { self->send(to, end_atom::value); },
              shard);
    run();
  }
  CHECK(state_of_actor<shard_state>(shard).ended.size() <= 2);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "peer bounds: a ring generation beyond the plan's losses is refused") {
  syncer_config cfg;
  cfg.algorithm = model::sync_algorithm::s_ma;
  cfg.merge = model::merge_mode::delta;
  auto reps = small_replicas(2);
  auto ss = spawn_ring(*this, cfg, reps); // 2 trainers: at most generation 1
  auto down0 = watch(sys, ss[0]);
  run();
  // A chunk of generation 5 is no ring this job can form: not kept.
  ring_chunk far;
  far.generation = 5;
  far.round = 1;
  far.step = 0;
  far.chunk = 0;
  far.values.values = {1.0f};
  self->send(ss[0], ring_atom::value, far);
  run();
  CHECK(state_of(ss[0]).early_chunks.empty());
  // A re-form to generation 7 (of 2 trainers, at most 1 loss) changes nothing.
  std::vector<caf::strong_actor_ptr> me{caf::actor_cast<caf::strong_actor_ptr>(ss[0])};
  self->send(ss[0], peers_atom::value, std::uint32_t{7}, std::uint32_t{0}, me);
  run();
  CHECK(state_of(ss[0]).generation == 0);
  CHECK(state_of(ss[0]).peers.size() == 2);
  CHECK_FALSE(down0.reason->has_value()); // refused, not failed
  for (auto& s : ss)
    self->send_exit(s, caf::exit_reason::user_shutdown);
  run();
}
