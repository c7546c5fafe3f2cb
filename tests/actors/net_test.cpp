// The network model (actors/sim_network.hpp) inside the actors, under the
// deterministic scheduler: the fixture's fake clock is the actors' clock, so
// a simulated delay passes only through advance(). Expected arrival times come
// from a second sim_network fed the same transfers in the same order.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

#include "actors/hogwild_worker.hpp"
#include "model/dense_layout.hpp"
#include "tests/actors/syncer_test_util.hpp"
#include "tests/actors/worker_mocks.hpp"

using namespace std::chrono_literals;
using model::sync_algorithm;
using clock_type = std::chrono::steady_clock;

namespace {

// 1 ms latency, 1 Gbit/s, no dilation: delays of milliseconds, far above the
// microseconds the bytes take, and far below the requests' timeouts.
const actors::sim_network::settings slow_net{1000.0, 1.0, 1.0};

struct net_worker_fixture : test::actor_fixture, mocks::peers {
  mocks::recorder_ptr rec = std::make_shared<mocks::recorder>();
  model::arch arch = mocks::small_arch();
  model::dense_layout layout{arch};
  actors::placement place{1, 2, 1}; // trainer on host 0, shards on hosts 1 and 2
  caf::actor watcher;

  net_worker_fixture() {
    rec->manual_reader = rec->manual_shards = rec->manual_syncer = false;
    spawn_peers(sys, rec);
    run();
  }

  ~net_worker_fixture() {
    rec->lookups.clear();
    stop_peers(self);
    self->send_exit(watcher, caf::exit_reason::user_shutdown);
    run();
  }

  void start_worker(std::shared_ptr<actors::sim_network> net) {
    actors::worker_config cfg;
    cfg.arch = arch;
    cfg.dense_opt.kind = model::dense_optimizer_kind::adagrad;
    std::vector<float> init(layout.size());
    model::init_dense(layout, init.data(), 7);
    cfg.replica = std::make_shared<actors::hogwild_replica>(init);
    cfg.reader = reader;
    cfg.shards = shards;
    cfg.syncer = syncer;
    cfg.trainer_handle = trainer;
    cfg.net = std::move(net);
    cfg.place = place;
    auto w = sys.spawn(actors::hogwild_worker, cfg);
    watcher = mocks::watch(sys, w, rec, "worker");
    self->send(w, messages::start_atom::value);
    run();
  }
};

} // namespace

TEST_CASE_FIXTURE(net_worker_fixture, "net: a worker holds its rows until the simulated arrival") {
  rec->batches.push_back(mocks::make_batch(0)); // then the end of data
  auto net = std::make_shared<actors::sim_network>(place.hosts(), slow_net);
  const auto t0 = sched.clock().now();
  start_worker(net);
  // The shards answered at once (wall time), but the rows are on the wire.
  REQUIRE(rec->lookups.size() == 2);
  CHECK(rec->count("next") == 1); // no prefetch: batch 0's rows are not in
  CHECK(rec->pushes.empty());
  CHECK(rec->done.empty());

  // The same transfers on a reference network: request, then reply, per shard.
  actors::sim_network ref(place.hosts(), slow_net);
  auto due = t0;
  for (const auto& l : rec->lookups) {
    const std::uint64_t k = l.req.keys.values.size();
    const auto shard_host = place.host_of_embedding(l.shard);
    const auto d_req = ref.transfer(0, shard_host, 16 + 8 * k, t0);
    const auto d_rep = ref.transfer(shard_host, 0, 16 + 4 * arch.dim * k, t0 + d_req);
    due = std::max(due, t0 + d_req + d_rep);
  }
  CHECK(due - t0 > 2ms); // two latencies plus the bytes
  CHECK(due - t0 < 3ms);

  advance(std::chrono::duration_cast<caf::timespan>(due - t0 - 1us));
  CHECK(rec->count("next") == 1);
  CHECK(rec->pushes.empty());
  advance(2us); // the rows are in: prefetch, end of data, batch 0 computed
  CHECK(rec->count("next") == 2);
  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].batches == 1);
  CHECK(rec->pushes.empty()); // computed, but the pushes are on the wire
  advance(2ms);
  CHECK(rec->pushes.size() == 2);
  CHECK(net->bytes_moved() > 0);
}

TEST_CASE_FIXTURE(net_worker_fixture, "net: without a network model nothing waits for the clock") {
  rec->batches.push_back(mocks::make_batch(0));
  rec->batches.push_back(mocks::make_batch(1, 1));
  start_worker(nullptr);
  // Everything ran without advancing the fake clock.
  REQUIRE(rec->done.size() == 1);
  CHECK(rec->done[0].batches == 2);
  CHECK(rec->pushes.size() == 4);
  CHECK(rec->count("next") == 3);
}

TEST_CASE_FIXTURE(test::actor_fixture, "net: fr-easgd holds each exchange reply until arrival") {
  using namespace syncer_test;
  std::vector<float> w{2, 4, 6, 8, 10, 12}, c{0, 1, 2, 3, 4, 5};
  const auto w0 = w;
  actors::placement place{1, 1, 2}; // syncer on host 0, dense shards on hosts 2 and 3
  auto net = std::make_shared<actors::sim_network>(place.hosts(), slow_net);
  syncer_config cfg;
  cfg.algorithm = sync_algorithm::fr_easgd;
  cfg.replica = make_replica(w);
  cfg.timeout = 5s;
  cfg.dense_ranges = model::split_range(w.size(), 2);
  cfg.net = net;
  cfg.place = place;
  std::vector<mock_shard_actor> shards;
  for (auto r : cfg.dense_ranges) {
    std::vector<float> part(c.begin() + r.offset, c.begin() + r.offset + r.size);
    shards.push_back(sys.spawn(mock_shard, part, r.offset, 0.5f, false));
    cfg.dense_shards.push_back(caf::actor_cast<actors::dense_shard_actor>(shards.back()));
  }
  auto s = sys.spawn(actors::shadow_syncer, cfg);
  reaper rip{*this};
  rip.add(s);
  rip.add_all(shards);
  const auto t0 = sched.clock().now();
  auto reply = request_async<std::uint64_t>(s, messages::sync_atom::value);
  run();
  CHECK_FALSE(reply->done());
  CHECK(values(cfg.replica) == w0); // the replies wait: nothing applied yet

  actors::sim_network ref(place.hosts(), slow_net);
  auto due = t0;
  for (std::size_t d = 0; d < 2; ++d) {
    const std::uint64_t bytes = 16 + 3 * sizeof(float);
    const auto d_req = ref.transfer(0, place.host_of_dense(d), bytes, t0);
    const auto d_rep = ref.transfer(place.host_of_dense(d), 0, bytes, t0 + d_req);
    due = std::max(due, t0 + d_req + d_rep);
  }
  advance(std::chrono::duration_cast<caf::timespan>(due - t0 - 1us));
  CHECK_FALSE(reply->done());
  advance(2us);
  REQUIRE(reply->done());
  CHECK(*reply->get() == 1);
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] -= 0.5f * (w[i] - c[i]);
  CHECK(values(cfg.replica) == w);
}

TEST_CASE_FIXTURE(test::actor_fixture, "net: ring chunks travel with their transfer delay") {
  using namespace syncer_test;
  std::vector<replica_ptr> reps;
  for (int r = 0; r < 3; ++r)
    reps.push_back(make_replica({float(10 * r), float(10 * r + 1), float(10 * r + 2)}));
  actors::placement place{3, 1, 1};
  syncer_config cfg;
  cfg.algorithm = sync_algorithm::s_ma;
  cfg.merge = model::merge_mode::overwrite;
  cfg.min_pause = 1s; // one round, then a long pause
  cfg.net = std::make_shared<actors::sim_network>(place.hosts(), slow_net);
  cfg.place = place;
  auto ss = spawn_ring(*this, cfg, reps);
  reaper rip{*this};
  rip.add_all(ss);
  for (const auto& s : ss)
    self->send(s, messages::start_atom::value);
  run();
  CHECK(values(reps[0]) == std::vector<float>{0, 1, 2}); // chunks still on the wire
  // 2 (N - 1) = 4 steps of one hop each, 1 ms per hop (plus < 1 us of bytes). Small
  // clock steps: a chunk sent at a step's clock time arrives a hop later.
  auto elapsed = 0us;
  while (values(reps[0]) == std::vector<float>{0, 1, 2} && elapsed < 20ms) {
    advance(50us);
    elapsed += 50us;
  }
  INFO("elapsed us: ", elapsed.count());
  CHECK(elapsed >= 4ms);
  CHECK(elapsed <= 4500us);
  for (const auto& r : reps)
    CHECK(values(r) == std::vector<float>{10, 11, 12});
}
