// Who may send what to a role (actors/authority.hpp, README "Security model"):
// messages from another node, sent through a forwarding proxy of that node
// (tests/actors/foreign_peer.hpp), are refused unless the plan gives that
// node the authority, and a refused message has no effect.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include <caf/send.hpp>

#include "actors/authority.hpp"
#include "actors/dense_shard.hpp"
#include "actors/embedding_shard.hpp"
#include "tests/actors/dct_exchange.hpp"
#include "tests/actors/foreign_peer.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/shard_save.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;

namespace {

// The error text of a reply (an error message), or "" when it is no error.
std::string refusal_of(const caf::message& m) {
  if (m.match_elements<caf::error>())
    return messages::error_text(m.get_as<caf::error>(0));
  return {};
}

// Push of +1 on every entry of global key 4 (shard 1 of 3 owns it).
embedding_grads push_on_key4() {
  embedding_grads g;
  g.keys.values = {4};
  g.grads.values.assign(4, 1.0f);
  return g;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "authority: local, director, trainer nodes and anonymous") {
  const auto here = sys.node();
  auto x = test::make_foreign_peer(sys, test::other_node(0x11));
  auto y = test::make_foreign_peer(sys, test::other_node(0x22));
  auto local = caf::actor_cast<caf::strong_actor_ptr>(self);
  actors::authority a; // one process: only this process
  auto xs = caf::actor_cast<caf::strong_actor_ptr>(x.handle);
  auto ys = caf::actor_cast<caf::strong_actor_ptr>(y.handle);
  CHECK(a.directs(local, here));
  CHECK(a.data_plane(local, here));
  CHECK(a.speaks_for(local, 7, here));
  CHECK_FALSE(a.directs(xs, here));
  CHECK_FALSE(a.data_plane(xs, here));
  CHECK_FALSE(a.speaks_for(xs, 0, here));
  CHECK_FALSE(a.directs(nullptr, here)); // anonymous: from no one
  a.director = test::other_node(0x11);
  a.trainer_nodes = {test::other_node(0x22), caf::node_id{}};
  CHECK(a.directs(xs, here));
  CHECK_FALSE(a.directs(ys, here)); // a trainer's node does not direct
  CHECK(a.data_plane(ys, here));
  CHECK(a.speaks_for(ys, 0, here));
  CHECK_FALSE(a.speaks_for(ys, 1, here)); // trainer 1's node is not y
  CHECK_FALSE(a.speaks_for(xs, 0, here)); // the director does not speak for trainers
  CHECK_FALSE(a.speaks_for(ys, 9, here)); // beyond the plan
  self->send_exit(x.sink, caf::exit_reason::user_shutdown);
  self->send_exit(y.sink, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: a stranger's push, lookup, save and recover are refused "
                  "and change nothing; a trainer's node pushes, only the director saves") {
  const auto stranger_node = test::other_node(0x31), trainer_node = test::other_node(0x32),
             director_node = test::other_node(0x33);
  auto cfg = test::small_shard_config();
  cfg.who.director = director_node;
  cfg.who.trainer_nodes = {trainer_node};
  auto shard = sys.spawn(actors::embedding_shard, cfg);
  run();
  auto before = request<float_blob>(shard, dump_atom::value);
  REQUIRE(before);
  auto stranger = test::make_foreign_peer(sys, stranger_node);
  auto trainer = test::make_foreign_peer(sys, trainer_node);
  auto director = test::make_foreign_peer(sys, director_node);

  // A stranger: the push has no effect, the lookup is answered with the refusal.
  caf::send_as(stranger.handle, shard, push_atom::value, push_on_key4());
  lookup_request req;
  req.keys.values = {4};
  caf::send_as(stranger.handle, shard, lookup_atom::value, req);
  run();
  auto after = request<float_blob>(shard, dump_atom::value);
  REQUIRE(after);
  CHECK(after->values == before->values);
  REQUIRE(stranger.replies->size() == 1);
  const auto why = refusal_of(stranger.replies->at(0));
  INFO(why);
  CHECK(why.find("embedding-shard-1 refused a lookup from actor") != std::string::npos);
  CHECK(why.find("only this process, the coordinator's node or a trainer's node may send it") !=
        std::string::npos);

  // A trainer's node: its push applies and its lookup is answered with rows.
  caf::send_as(trainer.handle, shard, push_atom::value, push_on_key4());
  caf::send_as(trainer.handle, shard, lookup_atom::value, req);
  run();
  auto pushed = request<float_blob>(shard, dump_atom::value);
  REQUIRE(pushed);
  CHECK(pushed->values != before->values);
  REQUIRE(trainer.replies->size() == 1);
  CHECK(trainer.replies->at(0).match_elements<embedding_rows>());

  // Saving writes a file where the sender says: only this process or the director.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ss-authority-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  caf::send_as(trainer.handle, shard, save_atom::value, dir.string());
  caf::send_as(stranger.handle, shard, recover_atom::value);
  run();
  CHECK(std::filesystem::is_empty(dir));
  REQUIRE(trainer.replies->size() == 2);
  CHECK(refusal_of(trainer.replies->at(1)).find("refused a save from") != std::string::npos);
  REQUIRE(stranger.replies->size() == 2);
  CHECK(refusal_of(stranger.replies->at(1)).find("refused a recover from") != std::string::npos);
  caf::send_as(director.handle, shard, save_atom::value, dir.string());
  run();
  test::join_saves(shard); // its writer thread (actors/embedding_shard_save.cpp)
  run();
  CHECK(std::filesystem::exists(dir / "embedding-1.bin"));
  std::filesystem::remove_all(dir);

  // Only the shard itself ends its own cut writes: a done from anyone else is refused.
  caf::send_as(director.handle, shard, done_atom::value, std::uint64_t{1});
  run();
  for (auto* p : {&stranger, &trainer, &director})
    self->send_exit(p->sink, caf::exit_reason::user_shutdown);
  self->send_exit(shard, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "dense shard: a DCT exchange speaks only for its own node's trainer; a "
                  "stranger's elastic exchange and dump are refused") {
  const auto t0_node = test::other_node(0x41), t1_node = test::other_node(0x42),
             stranger_node = test::other_node(0x43);
  auto c = test::dct_shard(2);
  c.who.trainer_nodes = {t0_node, t1_node};
  auto shard = sys.spawn(actors::dense_shard, c);
  run();
  auto t0 = test::make_foreign_peer(sys, t0_node);
  auto stranger = test::make_foreign_peer(sys, stranger_node);
  auto change = test::change_of;
  // t0's node claims trainer 1: refused, the centre unchanged.
  caf::send_as(t0.handle, shard, exchange_atom::value, change(1));
  run();
  auto centre = request<dense_range>(shard, dump_atom::value);
  REQUIRE(centre);
  CHECK(centre->values.values == std::vector<float>{1, 2, 3, 4});
  REQUIRE(t0.replies->size() == 1);
  const auto why = refusal_of(t0.replies->at(0));
  INFO(why);
  CHECK(why.find("dense-shard-1 refused a DCT exchange for trainer 1 from actor") !=
        std::string::npos);
  // As trainer 0 it is answered and the centre moves.
  caf::send_as(t0.handle, shard, exchange_atom::value, change(0));
  run();
  REQUIRE(t0.replies->size() == 2);
  CHECK(t0.replies->at(1).match_elements<sparse_range>());
  auto moved = request<dense_range>(shard, dump_atom::value);
  REQUIRE(moved);
  CHECK(moved->values.values != std::vector<float>{1, 2, 3, 4});
  // A stranger's elastic exchange and dump.
  dense_range w;
  w.offset = 10;
  w.values.values = {9, 9, 9, 9};
  caf::send_as(stranger.handle, shard, exchange_atom::value, w);
  caf::send_as(stranger.handle, shard, dump_atom::value);
  run();
  REQUIRE(stranger.replies->size() == 2);
  CHECK(refusal_of(stranger.replies->at(0)).find("refused an exchange from") != std::string::npos);
  CHECK(refusal_of(stranger.replies->at(1)).find("refused a dump from") != std::string::npos);
  auto same = request<dense_range>(shard, dump_atom::value);
  REQUIRE(same);
  CHECK(same->values.values == moved->values.values);
  for (auto* p : {&t0, &stranger})
    self->send_exit(p->sink, caf::exit_reason::user_shutdown);
  self->send_exit(shard, caf::exit_reason::user_shutdown);
}
