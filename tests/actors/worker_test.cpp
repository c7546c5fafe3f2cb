// hogwild_worker as protocol walks against mock peers (worker_mocks.hpp):
// start -> next -> lookups -> rows -> next (prefetch) -> batch -> lookups of
// the next batch -> push -> ... -> done.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <caf/system_messages.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "actors/hogwild_worker.hpp"
#include "model/dense_layout.hpp"
#include "tests/actors/test_fixture.hpp"
#include "tests/actors/worker_mocks.hpp"

namespace {

using namespace messages;
using model::sync_algorithm;

struct worker_fixture : test::actor_fixture, mocks::peers {
  mocks::recorder_ptr rec = std::make_shared<mocks::recorder>();
  model::arch arch = mocks::small_arch();
  model::dense_layout layout{arch};
  std::vector<float> init;
  actors::replica_ptr replica;
  std::vector<caf::actor> watchers;
  bool shard_restarts = false; // recovery.mode=partial

  worker_fixture() : init(layout.size()) {
    model::init_dense(layout, init.data(), 7);
    replica = std::make_shared<actors::hogwild_replica>(init);
    spawn_peers(sys, rec);
    run();
  }

  ~worker_fixture() {
    // The stored promises reference the mocks: drop them, then stop the mocks.
    rec->nexts.clear();
    rec->lookups.clear();
    rec->syncs.clear();
    stop_peers(self);
    for (auto& w : watchers)
      self->send_exit(w, caf::exit_reason::user_shutdown);
    run();
  }

  // Sends the queued mock replies (see worker_mocks.hpp) and runs until idle.
  void flush() {
    self->send(caf::actor_cast<caf::actor>(reader), tick_atom::value);
    for (auto& s : shards)
      self->send(caf::actor_cast<caf::actor>(s), tick_atom::value);
    self->send(syncer, tick_atom::value);
    run();
  }

  actors::worker_actor start_worker(sync_algorithm alg = sync_algorithm::none,
                                    std::uint64_t sync_every = 0) {
    actors::worker_config cfg;
    cfg.trainer = 0;
    cfg.worker = 1;
    cfg.arch = arch;
    cfg.dense_opt.kind = model::dense_optimizer_kind::adagrad;
    cfg.replica = replica;
    cfg.reader = reader;
    cfg.shards = shards;
    cfg.syncer = syncer;
    cfg.algorithm = alg;
    cfg.sync_every = sync_every;
    cfg.trainer_handle = trainer;
    cfg.shard_restarts = shard_restarts;
    auto w = sys.spawn(actors::hogwild_worker, cfg);
    watchers.push_back(mocks::watch(sys, w, rec, "worker"));
    self->send(w, start_atom::value);
    run();
    return w;
  }
};

} // namespace

TEST_CASE_FIXTURE(worker_fixture, "worker: one step walks lookup -> rows -> push -> done") {
  start_worker();
  REQUIRE(rec->nexts.size() == 1);
  rec->reply_next(0, mocks::make_batch(0));
  flush();
  // One lookup per shard, de-duplicated, each key owned by that shard.
  REQUIRE(rec->lookups.size() == 2);
  const auto batch = mocks::make_batch(0);
  std::vector<std::uint64_t> keys(batch.cat.size());
  model::make_keys(batch.cat.data(), keys.size(), 4, 10, keys.data());
  model::sparse_index idx;
  idx.build(keys.data(), keys.size());
  std::set<std::uint64_t> seen;
  for (const auto& l : rec->lookups) {
    CHECK(l.req.batch == 0);
    for (auto k : l.req.keys.values) {
      CHECK(model::key_row(k) % 2 == l.shard);
      CHECK(seen.insert(k).second); // no key twice, in any shard
    }
  }
  CHECK(seen == std::set<std::uint64_t>(idx.unique().begin(), idx.unique().end()));
  CHECK(rec->pushes.empty());

  rec->answer_lookups();
  flush();
  CHECK(rec->nexts.size() == 2); // prefetch: batch 1 requested before batch 0 is computed
  CHECK(rec->pushes.empty());    // batch 0 waits for the reader's answer
  rec->reply_next(1, example_batch{}); // end of data
  flush();

  // The expectation: the same forward/backward on the same rows and params.
  model::dlrm net(arch);
  std::vector<float> rows(idx.unique().size() * 4);
  for (std::size_t u = 0; u < idx.unique().size(); ++u)
    for (std::size_t j = 0; j < 4; ++j)
      rows[u * 4 + j] = mocks::mock_row(idx.unique()[u], j);
  model::workspace ws;
  std::vector<float> grads(layout.size()), grad_rows(rows.size());
  net.forward_backward(init.data(), batch.dense.data(),
                       {rows.data(), idx.inverse().data(), idx.unique().size()},
                       batch.labels.data(), 5, ws, grads.data(), grad_rows.data());
  std::map<std::uint64_t, std::size_t> pos;
  for (std::size_t u = 0; u < idx.unique().size(); ++u)
    pos[idx.unique()[u]] = u;

  REQUIRE(rec->pushes.size() == 2);
  for (const auto& p : rec->pushes) {
    const auto& lookup = rec->lookups[p.shard == rec->lookups[0].shard ? 0 : 1];
    CHECK(p.g.keys == lookup.req.keys); // same keys, same order as the lookup
    REQUIRE(p.g.grads.size() == p.g.keys.size() * 4);
    for (std::size_t i = 0; i < p.g.keys.size(); ++i)
      for (std::size_t j = 0; j < 4; ++j)
        CHECK(p.g.grads.values[i * 4 + j] ==
              doctest::Approx(grad_rows[pos[p.g.keys.values[i]] * 4 + j]).epsilon(1e-5));
  }
  // The replica took one Adagrad step from `init` with those gradients.
  std::vector<float> expected = init, acc(init.size(), 0.0f);
  model::dense_optimizer opt; // same defaults as the worker's (adagrad, lr 0.03)
  opt.apply(expected.data(), acc.data(), grads.data(), expected.size());
  std::size_t off = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    off += std::abs(replica->params()[i] - expected[i]) > 1e-5f * (1 + std::abs(expected[i]));
  CHECK(off == 0);
  CHECK(replica->batches.load() == 1);
  CHECK(replica->examples.load() == 5);

  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].examples == 5);
  CHECK(rec->done[0].batches == 1);
  CHECK(rec->done[0].loss_sum == doctest::Approx(ws.loss_sum));
  CHECK(rec->done[0].positives == 2); // labels {1, 0, 0, 1, 0}
  CHECK(rec->done[0].lookup_bytes == idx.unique().size() * 4 * sizeof(float));
  REQUIRE(rec->down.count("worker") == 1);
  CHECK_FALSE(rec->down["worker"]); // quit normally
}

TEST_CASE_FIXTURE(worker_fixture, "worker: prefetch sends batch 1's lookups before batch 0's push") {
  start_worker();
  rec->reply_next(0, mocks::make_batch(0));
  flush();
  rec->answer_lookups();
  flush();
  REQUIRE(rec->nexts.size() == 2);
  rec->reply_next(1, mocks::make_batch(1, 1)); // shifted hashes: other rows
  flush();
  // Per shard (FIFO mailbox = send order): lookup of batch 1, then the push.
  for (int s = 0; s < 2; ++s) {
    const auto sn = std::to_string(s);
    const auto lookup1 = rec->index_of("lookup s" + sn + " b1");
    const auto push = rec->index_of("push s" + sn);
    CHECK(lookup1 < rec->log.size());
    CHECK(lookup1 < push);
    CHECK(push < rec->log.size());
  }
  CHECK(rec->index_of("next") < rec->index_of("push s0"));
  CHECK(rec->count("next") == 2); // at most one batch ahead: batch 2 waits for batch 1's rows
  REQUIRE(rec->pushes.size() == 2);
  CHECK(rec->pushes[0].g.keys == rec->lookups[rec->lookups[0].shard == rec->pushes[0].shard ? 0 : 1]
                                   .req.keys); // the push is batch 0's
  sched.clock().current_time += std::chrono::milliseconds(5); // batch 1's rows are late
  rec->answer_lookups();
  flush();
  REQUIRE(rec->nexts.size() == 3);
  rec->reply_next(2, example_batch{});
  flush();
  CHECK(rec->pushes.size() == 4);
  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].batches == 2);
  CHECK(rec->done[0].examples == 10);
  // Waited from the end of batch 0's computation to batch 1's rows: at least
  // the 5 ms the clock moved, exactly (the actor clock, not the wall's).
  CHECK(rec->done[0].lookup_wait_seconds == doctest::Approx(0.005));
}

TEST_CASE_FIXTURE(worker_fixture, "worker: FR waits for the sync reply before the next batch") {
  rec->manual_reader = false;
  rec->manual_shards = false;
  rec->batches = {mocks::make_batch(0), mocks::make_batch(1, 1)};
  start_worker(sync_algorithm::fr_easgd, 1);
  // Batch 0 is computed and pushed, batch 1's rows are in, but the sync is
  // unanswered: no further batch is requested or computed.
  REQUIRE(rec->syncs.size() == 1);
  CHECK(rec->count("next") == 2);
  CHECK(rec->count("push") == 2);
  CHECK(rec->done.empty());
  sched.clock().current_time += std::chrono::milliseconds(5); // blocked, on the actor clock
  rec->reply_sync(0, 1);
  flush();
  CHECK(rec->count("next") == 3);
  CHECK(rec->count("push") == 4);
  REQUIRE(rec->syncs.size() == 2); // after batch 1, before reporting done
  CHECK(rec->done.empty());
  rec->reply_sync(1, 2);
  flush();
  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].batches == 2);
  CHECK(rec->done[0].blocked_seconds == doctest::Approx(0.005)); // the 5 ms, exactly
}

TEST_CASE_FIXTURE(worker_fixture, "worker: shadow methods never request a sync") {
  rec->manual_reader = false;
  rec->manual_shards = false;
  rec->batches = {mocks::make_batch(0), mocks::make_batch(1, 1)};
  start_worker(sync_algorithm::s_easgd, 0);
  CHECK(rec->count("sync request") == 0);
  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].batches == 2);
  CHECK(rec->done[0].blocked_seconds == 0.0);
}

TEST_CASE_FIXTURE(worker_fixture, "worker: a dead shard ends the worker with shard_down") {
  rec->manual_reader = false;
  rec->batches = {mocks::make_batch(0)};
  self->send_exit(shards[1], caf::exit_reason::kill);
  run();
  start_worker();
  REQUIRE(rec->down.count("worker") == 1);
  const auto& err = rec->down["worker"];
  CHECK(code_of(err) == errc::shard_down);
  CHECK(context_of(err).find("worker-0-1: embedding-shard-1") != std::string::npos);
  CHECK(rec->done.empty());
}

// A remote shard whose node dies answers nothing and bounces nothing: its
// lookup is gone with it, and only the shard's DOWN tells the worker. The
// mock shard here keeps the request's promise and is killed, which is the
// same: no error reaches the worker before its request times out.
TEST_CASE_FIXTURE(worker_fixture,
                  "worker: with shard restarts, a shard that dies holding a lookup is asked "
                  "again after the rebind; the dead one's timeout is ignored") {
  shard_restarts = true;
  auto w = start_worker();
  REQUIRE(rec->nexts.size() == 1);
  rec->reply_next(0, mocks::make_batch(0));
  flush();
  REQUIRE(rec->lookups.size() == 2);
  CHECK(rec->count("lookup s0 b0") == 1);
  self->send_exit(shards[0], caf::exit_reason::kill);
  run();
  for (auto& l : rec->lookups)
    l.answered = l.shard == 0; // the dead shard's promise stays unsent
  rec->answer_lookups();       // the live shard answers
  flush();
  advance(std::chrono::seconds(31)); // past the worker's request timeout
  CHECK(rec->down.count("worker") == 0); // the timeout of the lookup to the dead shard: ignored
  auto fresh =
    caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(mocks::shard, rec, std::size_t{0}));
  self->send(w, rebind_atom::value, std::uint32_t{0}, caf::actor_cast<caf::strong_actor_ptr>(fresh));
  run();
  CHECK(rec->count("lookup s0 b0") == 2); // sent again, to the new shard
  CHECK(rec->count("lookup s1 b0") == 1); // the live shard's lookup stayed as it was
  shards[0] = fresh; // flush() ticks it, the fixture stops it
  rec->answer_lookups();
  flush();
  REQUIRE(rec->nexts.size() == 2); // batch 0's rows are complete: batch 1 asked for
  rec->reply_next(1, example_batch{});
  flush();
  CHECK(rec->count("push s0") == 1); // batch 0 trained, its rows from the new shard
  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].examples == 5);
  CHECK(rec->down.count("worker") == 1);
  CHECK(!rec->down["worker"]); // a normal exit
}

TEST_CASE_FIXTURE(worker_fixture, "worker: an unanswered lookup ends the worker with request_timeout") {
  rec->manual_reader = false;
  rec->batches = {mocks::make_batch(0)};
  start_worker(); // the shards keep their promises: no rows ever arrive
  CHECK(rec->down.count("worker") == 0);
  advance(std::chrono::seconds(30)); // the worker's default request timeout
  REQUIRE(rec->down.count("worker") == 1);
  CHECK(code_of(rec->down["worker"]) == errc::request_timeout);
}

TEST_CASE_FIXTURE(worker_fixture,
                  "worker: its own watchdog, not CAF's request timeouts, ends a lookup that waits "
                  "cfg.timeout (T to 1.25 T)") {
  rec->manual_reader = false;
  rec->batches = {mocks::make_batch(0)};
  start_worker(); // both shards hold batch 0's lookups unanswered
  REQUIRE(rec->count("lookup s0 b0") == 1);
  REQUIRE(rec->count("lookup s1 b0") == 1);
  // The one timer is the watchdog's tick: the reader's request (answered)
  // and the two lookups (in flight) left no CAF request timeout behind.
  CHECK(sched.clock().schedule().size() == 1);
  advance(std::chrono::seconds(29)); // the tick at 7.5 s finds 29 s < 30 s
  CHECK(rec->down.count("worker") == 0);
  advance(std::chrono::seconds(8)); // the next tick, 7.5 s later
  REQUIRE(rec->down.count("worker") == 1);
  CHECK(code_of(rec->down["worker"]) == errc::request_timeout);
  CHECK(context_of(rec->down["worker"]) ==
        "worker-0-1: embedding-shard-0: no reply to the lookup of batch 0 within 30000 ms");
}

TEST_CASE_FIXTURE(worker_fixture, "worker: the watchdog ends a worker whose reader never answers") {
  start_worker(); // the manual reader holds the request for batch 0
  REQUIRE(rec->nexts.size() == 1);
  CHECK(sched.clock().schedule().size() == 1); // the tick alone
  advance(std::chrono::seconds(29));
  CHECK(rec->down.count("worker") == 0);
  advance(std::chrono::seconds(8));
  REQUIRE(rec->down.count("worker") == 1);
  CHECK(code_of(rec->down["worker"]) == errc::request_timeout);
  CHECK(context_of(rec->down["worker"]) ==
        "worker-0-1: reader: no reply to the request for batch 0 within 30000 ms");
}

TEST_CASE_FIXTURE(worker_fixture, "worker: a malformed batch ends the worker with input_error") {
  rec->manual_reader = false;
  auto bad = mocks::make_batch(0);
  bad.num_cat = 3; // the model has 4 tables
  rec->batches = {bad};
  start_worker();
  REQUIRE(rec->down.count("worker") == 1);
  CHECK(code_of(rec->down["worker"]) == errc::input_error);
  CHECK(rec->lookups.empty());
}

// Issue 40, row 14: a remote shard's node dies between two batches. The
// worker gets the shard's DOWN at once, but its proxy swallows what is sent
// to it afterwards without an error (CAF 0.17: a killed proxy drops
// messages; only a timeout would end such a request). The DOWN is forged
// here, with the mock shard kept alive and holding what it gets, which is
// the same to the worker. The next batch's lookup must wait for the rebind,
// not go to the dead handle and run out the request timeout.
TEST_CASE_FIXTURE(worker_fixture,
                  "worker: with shard restarts, a lookup for a shard already down waits for "
                  "the rebind instead of the request timeout") {
  shard_restarts = true;
  auto w = start_worker();
  rec->reply_next(0, mocks::make_batch(0));
  flush();
  rec->answer_lookups(); // batch 0's rows, from both shards
  flush();
  REQUIRE(rec->nexts.size() == 2); // batch 1 asked for; nothing in flight at the shards
  caf::anon_send(caf::actor_cast<caf::actor>(w),
                 caf::down_msg{shards[0].address(), caf::exit_reason::remote_link_unreachable});
  run();
  rec->reply_next(1, mocks::make_batch(1));
  flush();
  CHECK(rec->count("lookup s1 b1") == 1);
  CHECK(rec->count("lookup s0 b1") == 0); // not sent into the dead proxy
  for (auto& l : rec->lookups)
    l.answered = l.answered || l.shard == 0; // the "dead" shard answers nothing
  rec->answer_lookups();
  flush();
  advance(std::chrono::seconds(31)); // past the request timeout (30 s): still waiting
  CHECK(rec->down.count("worker") == 0);
  auto fresh =
    caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(mocks::shard, rec, std::size_t{0}));
  self->send(w, rebind_atom::value, std::uint32_t{0}, caf::actor_cast<caf::strong_actor_ptr>(fresh));
  run();
  CHECK(rec->count("lookup s0 b1") == 1); // sent once, to the new shard
  auto old = shards[0];
  shards[0] = fresh; // flush() ticks it, the fixture stops it
  rec->answer_lookups();
  flush();
  REQUIRE(rec->nexts.size() == 3);
  rec->reply_next(2, example_batch{});
  flush();
  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].examples == 10); // both batches trained
  CHECK(rec->down.count("worker") == 1);
  CHECK(!rec->down["worker"]); // a normal exit
  self->send_exit(old, caf::exit_reason::user_shutdown);
  run();
}
