// A cut after a trainer's loss on the embedding shard's side
// (actors/embedding_shard_cut.cpp): cut(N, FOLDER, workers) aligns over the
// listed workers only, each marked or ended. A lost trainer's worker that
// ended before the loss is not one of them: counted, its end would stand in
// for a live worker's marker and the cut would align before that worker's
// pushes were in. An ended worker that is gone counts by the name it had
// when its end came. The list names each worker "ID@NODE" (CAF's to_string of
// its handle). A list naming a worker twice, a name of another form, no
// worker or more workers than the job has is refused.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/shard_save.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;

namespace {

// A stand-in worker: sends the shard its end or its marker when told.
caf::behavior relay(caf::event_based_actor* self, actors::embedding_shard_actor to) {
  return {
    [=](end_atom) { self->send(to, end_atom::value); },
    [=](cut_atom, std::uint64_t id) { self->send(to, cut_atom::value, id); },
  };
}

// A worker's name in a cut's list: "ID@NODE".
std::string name_of(const caf::actor& a) {
  return caf::to_string(caf::actor_cast<caf::strong_actor_ptr>(a));
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: a cut over listed workers ignores an unlisted worker's end "
                  "and counts a gone worker's") {
  auto c = test::small_shard_config();
  // The job's 4 workers: a lost trainer's (a) and three live ones (b, w, d).
  c.max_workers = 4;
  auto shard = sys.spawn(embedding_shard, c);
  run();
  auto& st = test::shard_state(shard);
  auto a = sys.spawn(relay, shard);
  auto b = sys.spawn(relay, shard);
  auto w = sys.spawn(relay, shard);
  auto d = sys.spawn(relay, shard);
  self->send(a, end_atom::value); // a ended, then its trainer was lost
  self->send(d, end_atom::value); // d ended and is gone: no handle names it any more
  run();
  std::vector<std::string> live{name_of(b), name_of(w), name_of(d)};
  self->send_exit(d, caf::exit_reason::normal);
  run();
  d = caf::actor{};
  REQUIRE(caf::to_string(st.ended.back()) != live[2]); // (its address now names no one)
  auto cut = request_async<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1},
                                           std::string{}, live);
  run();
  REQUIRE(st.cut);
  CHECK(st.cut->expected == 3);
  self->send(b, cut_atom::value, std::uint64_t{1});
  run();
  // With a count of 3, a's and d's ends and b's marker would have aligned it here.
  CHECK_FALSE(st.cut->aligned);
  CHECK_FALSE(cut->done());
  self->send(w, cut_atom::value, std::uint64_t{1});
  while (!(st.cut && st.cut->aligned) && run_once()) {
  }
  REQUIRE(st.cut);
  CHECK(st.cut->aligned);
  REQUIRE(st.writer);
  REQUIRE_FALSE(st.writer->finish());
  run();
  REQUIRE(cut->done());
  REQUIRE(cut->get());
  CHECK(cut->get()->name == "embedding-1.bin");
  for (auto& x : {a, b, w})
    self->send_exit(x, caf::exit_reason::user_shutdown);
  self->send_exit(shard, caf::exit_reason::user_shutdown);
  run();
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: a cut's worker list with a worker twice, a malformed name, "
                  "no worker or too many is refused") {
  auto c = test::small_shard_config();
  c.max_workers = 3;
  auto shard = sys.spawn(embedding_shard, c);
  run();
  auto b = sys.spawn(relay, shard);
  const auto h = name_of(b);
  auto twice = request<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1}, std::string{},
                                       std::vector<std::string>{h, h});
  REQUIRE(!twice);
  CHECK(context_of(twice.error()).find("a worker twice") != std::string::npos);
  auto bad = request<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1}, std::string{},
                                     std::vector<std::string>{h, "worker 2"});
  REQUIRE(!bad);
  CHECK(context_of(bad.error()).find("a name not of the form ID@NODE") != std::string::npos);
  auto none = request<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1}, std::string{},
                                      std::vector<std::string>{});
  REQUIRE(!none);
  CHECK(context_of(none.error()).find("an empty worker list") != std::string::npos);
  // More workers than the job has: refused as a count is.
  std::vector<caf::actor> spawned;
  std::vector<std::string> four;
  for (int i = 0; i < 4; ++i) {
    spawned.push_back(sys.spawn(relay, shard));
    four.push_back(name_of(spawned.back()));
  }
  auto many = request<shard_cut_file>(shard, cut_atom::value, std::uint64_t{1}, std::string{},
                                      four);
  REQUIRE(!many);
  CHECK(context_of(many.error()).find("cluster.trainers x cluster.workers") != std::string::npos);
  self->send_exit(b, caf::exit_reason::user_shutdown);
  for (auto& x : spawned)
    self->send_exit(x, caf::exit_reason::user_shutdown);
  self->send_exit(shard, caf::exit_reason::user_shutdown);
  run();
}
