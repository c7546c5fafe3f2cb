// The simulated cluster under the virtual clock (sim.clock=virtual): every
// role on CAF's deterministic scheduler, driven by the discrete-event engine
// (sim/virtual_time.hpp). Runs are repeatable to the bit, every sync
// method completes, and the engine charges what the wall clock could not:
// shared cores and time blocked in foreground rounds.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/cluster/cluster_run.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace virtual_cluster_test {

namespace {

// The cluster tests' data: 8000 synthetic rows.
struct data_files : test::synthetic_train_file {
  data_files() : synthetic_train_file("vt", 8000, 31) {}
};

runtime::train_config config(const data_files& d, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--data.train=" + d.train, "--cluster.mode=simulated",
                                   "--sim.clock=virtual", "--output.progress=none",
                                   "--model.rows-per-table=20000"};
  args.insert(args.end(), extra.begin(), extra.end());
  return test::train_config_of(args);
}

runtime::run_metrics run(const data_files& d, const std::vector<std::string>& extra) {
  auto out = test::run_cluster(config(d, extra));
  REQUIRE(out.sim);
  return out;
}

// Two trainers whose handlers cost (next to) nothing, with the network model
// on: the hosts' busy time is then the messages' charges alone.
const std::vector<std::string> messages_only = {
  "--cluster.trainers=2", "--sync.algorithm=none", "--net.enabled=true",
  "--train.max-examples=4000", "--sim.message-us=0", "--sim.gflops=1e9",
  "--sim.memory-gbps=1e9"};

// Every host's busy seconds, summed.
double busy(const runtime::run_metrics& m) {
  double s = 0;
  for (double b : m.sim->host_busy_seconds)
    s += b;
  return s;
}

} // namespace

TEST_CASE("virtual cluster: the simulated cluster's default clock; the other modes are on the wall") {
  data_files d;
  const std::string train = "--data.train=" + d.train;
  CHECK(test::train_config_of({train}).sim.virtual_clock); // the default mode: simulated
  CHECK_FALSE(test::train_config_of({train, "--sim.clock=wall"}).sim.virtual_clock);
  CHECK_FALSE(test::train_config_of({train, "--cluster.mode=sequential"}).sim.virtual_clock);
  // A configuration written by output.config lists sim.clock=virtual for
  // every mode; a sequential run reads it back on the wall clock.
  CHECK_FALSE(test::train_config_of({train, "--cluster.mode=sequential", "--sim.clock=virtual"})
                  .sim.virtual_clock);
}

TEST_CASE("virtual cluster: the same command gives bit-identical metrics") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=3", "--cluster.workers=2",
                                        "--cluster.embedding-shards=2", "--sync.algorithm=s-ma",
                                        "--net.enabled=true"};
  const auto first = run(d, cmd);
  CHECK_FALSE(first.workers); // thread CPU time: left out on the virtual clock
  const auto a = runtime::to_json(first);
  const auto b = runtime::to_json(run(d, cmd));
  CHECK(a == b);
  // And the run's own inputs matter: another seed of the model, other metrics.
  CHECK(runtime::to_json(run(d, test::with(cmd, {"--model.seed=2"}))) != a);
}

TEST_CASE("virtual cluster: every sync method trains every example") {
  data_files d;
  for (const char* alg : {"none", "s-easgd", "fr-easgd", "s-ma", "fr-ma", "s-bmuf", "fr-bmuf"}) {
    CAPTURE(alg);
    const auto m = run(d, {"--cluster.trainers=2", "--cluster.workers=2",
                           "--cluster.embedding-shards=2", std::string("--sync.algorithm=") + alg});
    CHECK(m.examples == 8000);
    CHECK(m.sim->virtual_seconds > 0);
    CHECK(m.seconds <= m.sim->virtual_seconds);
    if (std::string(alg) != "none")
      CHECK(m.sync.rounds > 0);
  }
}

TEST_CASE("virtual cluster: a ring of one trainer finishes under every ring method") {
  // FR-MA and FR-BMUF once hung here after the end of the data (see
  // `git log -S "Problems found while measuring" -- docs/RESULTS.md`); on the
  // virtual clock a hang is an error (nothing left to run), not a stall.
  data_files d;
  for (const char* alg : {"s-ma", "fr-ma", "s-bmuf", "fr-bmuf"}) {
    CAPTURE(alg);
    const auto m = run(d, {"--cluster.trainers=1", "--cluster.embedding-shards=1",
                           std::string("--sync.algorithm=") + alg, "--sync.k=1"});
    CHECK(m.examples == 8000);
    CHECK(m.sync.bytes == 0); // a ring of one sends nothing
  }
}

TEST_CASE("virtual cluster: workers of one trainer share their host's cores") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=1", "--cluster.workers=2",
                                        "--cluster.embedding-shards=1", "--sync.algorithm=none"};
  const auto slow = run(d, test::with(cmd, {"--sim.cores-per-host=1"}));
  const auto fast = run(d, test::with(cmd, {"--sim.cores-per-host=3"}));
  // The workers' batches dominate the trainer's host: one core runs them one
  // after the other, three side by side.
  CHECK(slow.seconds > 1.6 * fast.seconds);
  CHECK(slow.seconds < 2.2 * fast.seconds);
}

TEST_CASE("virtual cluster: sim.core-contention slows a handler by its host's other busy cores") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=1", "--cluster.workers=2",
                                        "--cluster.embedding-shards=1", "--sync.algorithm=none",
                                        "--train.max-examples=4000"};
  // One core per host: no other core, so no contention, to the bit.
  const auto one = test::with(cmd, {"--sim.cores-per-host=1"});
  CHECK(runtime::to_json(run(d, one)) ==
        runtime::to_json(run(d, test::with(one, {"--sim.core-contention=3"}))));
  // Three cores: the two workers' batches overlap, each with one other core
  // busy most of the time: x (1 + (2 - 1) x 1/2) = 1.5 then.
  const auto three = test::with(cmd, {"--sim.cores-per-host=3"});
  const auto base = run(d, three);
  const auto slow = run(d, test::with(three, {"--sim.core-contention=2"}));
  const std::size_t trainer_host = 0, shard_host = 1;
  const double ratio = slow.sim->host_busy_seconds[trainer_host] /
                       base.sim->host_busy_seconds[trainer_host];
  CHECK(ratio > 1.3);
  CHECK(ratio <= 1.5 + 1e-9); // never more than one other core of two busy at a time
  CHECK(slow.seconds > 1.3 * base.seconds);
  // The shard's host runs one role, one handler at a time: never slowed.
  CHECK(slow.sim->host_busy_seconds[shard_host] ==
        doctest::Approx(base.sim->host_busy_seconds[shard_host]).epsilon(1e-12));
}

TEST_CASE("virtual cluster: an embedding shard is charged sim.lookup-row-ns and sim.push-row-ns per row") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=1", "--cluster.embedding-shards=1",
                                        "--sync.algorithm=none", "--train.max-examples=4000"};
  const auto base = run(d, test::with(cmd, {"--sim.lookup-row-ns=1000", "--sim.push-row-ns=1000"}));
  const auto lookups = run(d, test::with(cmd, {"--sim.lookup-row-ns=2000", "--sim.push-row-ns=1000"}));
  const auto pushes = run(d, test::with(cmd, {"--sim.lookup-row-ns=1000", "--sim.push-row-ns=2000"}));
  // Every row a lookup returns (4 x dim bytes of the reply) is gathered once
  // and, by the push of its batch, updated once: 1 us more per row.
  const double rows = double(base.bytes.lookup) / (4.0 * 16);
  REQUIRE(rows > 1000);
  const std::size_t shard_host = 1; // trainer 0 on host 0, embedding shard 0 on host 1
  const double extra = rows * 1e-6;
  CHECK(lookups.sim->host_busy_seconds[shard_host] - base.sim->host_busy_seconds[shard_host] ==
        doctest::Approx(extra).epsilon(1e-6));
  CHECK(pushes.sim->host_busy_seconds[shard_host] - base.sim->host_busy_seconds[shard_host] ==
        doctest::Approx(extra).epsilon(1e-6));
  // 0 (the default) charges the rows' bytes at sim.memory-gbps instead.
  const auto bytes = run(d, cmd);
  CHECK(bytes.sim->host_busy_seconds[shard_host] < base.sim->host_busy_seconds[shard_host] - extra);
}

TEST_CASE("virtual cluster: a reader is charged sim.parse-example-ns per example it parses") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=1", "--cluster.embedding-shards=1",
                                        "--sync.algorithm=none", "--train.max-examples=4000",
                                        "--train.batch-size=128"};
  const auto base = run(d, test::with(cmd, {"--sim.parse-example-ns=1000"}));
  const auto slow = run(d, test::with(cmd, {"--sim.parse-example-ns=3000"}));
  // The reader (on the trainer's host 0) is charged a whole batch per
  // request: 32 batches (4 000 examples, the last one short) and the request
  // that finds the end of the data, 2 us more per example of each. The
  // longer run also has a few more progress ticks (sim.message-us each).
  const std::size_t trainer_host = 0;
  const double per_batch = 128 * 2e-6;
  const double batches =
    (slow.sim->host_busy_seconds[trainer_host] - base.sim->host_busy_seconds[trainer_host]) /
    per_batch;
  CHECK(batches >= 33.0 - 1e-9);
  CHECK(batches < 33.1);
  CHECK(slow.seconds > base.seconds);
  // 0 (the default) charges 2 KB an example at sim.memory-gbps (7.5 GB/s:
  // 0.27 us), less than 1 us.
  const auto bytes = run(d, cmd);
  CHECK(bytes.sim->host_busy_seconds[trainer_host] < base.sim->host_busy_seconds[trainer_host]);
}

TEST_CASE("virtual cluster: a worker is charged sim.batch-id-ns per id of each batch") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=1", "--cluster.embedding-shards=1",
                                        "--sync.algorithm=none", "--train.max-examples=4000",
                                        "--train.batch-size=128"};
  const auto base = run(d, test::with(cmd, {"--sim.batch-id-ns=10"}));
  const auto slow = run(d, test::with(cmd, {"--sim.batch-id-ns=30"}));
  // The worker (on the trainer's host 0) handles 32 batches (4 000 examples,
  // the last one short) of 26 ids an example: 20 ns more per id. The longer
  // run also has a few more progress ticks (sim.message-us each).
  const std::size_t trainer_host = 0;
  const double extra = 4000.0 * 26 * 20e-9;
  const double more =
    slow.sim->host_busy_seconds[trainer_host] - base.sim->host_busy_seconds[trainer_host];
  CHECK(more >= extra - 1e-12);
  CHECK(more < extra + 0.1 * extra);
  CHECK(slow.seconds > base.seconds);
  // 0 (the default) charges nothing for it.
  const auto none = run(d, cmd);
  CHECK(none.sim->host_busy_seconds[trainer_host] <
        base.sim->host_busy_seconds[trainer_host] - 0.9 * extra / 2);
}

TEST_CASE("virtual cluster: dct.mp charges sim.mp-push-value-ns to the worker and "
          "sim.mp-reply-value-ns to the shard, per value") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=1", "--cluster.embedding-shards=1",
                                        "--sync.algorithm=none", "--train.max-examples=4000",
                                        "--dct.mp=true"};
  auto at = [&](int push_ns, int reply_ns) {
    return run(d, test::with(cmd, {"--sim.mp-push-value-ns=" + std::to_string(push_ns),
                                   "--sim.mp-reply-value-ns=" + std::to_string(reply_ns)}));
  };
  const auto base = at(10, 10), push2 = at(20, 10), push3 = at(30, 10), reply2 = at(10, 20);
  const std::size_t trainer_host = 0, shard_host = 1;
  auto busy = [](const auto& r, std::size_t h) { return r.sim->host_busy_seconds[h]; };
  // Every value of every row a batch looks up is pushed back thresholded
  // once: 10 ns more a value charges the worker's host the same each time
  // (the runs are the same but for their clocks).
  const double d1 = busy(push2, trainer_host) - busy(base, trainer_host);
  const double d2 = busy(push3, trainer_host) - busy(push2, trainer_host);
  CHECK(d1 > 1e-4); // at least 10 000 values
  CHECK(d2 == doctest::Approx(d1).epsilon(0.02));
  CHECK(busy(push2, shard_host) == doctest::Approx(busy(base, shard_host)).epsilon(1e-9));
  // The shard's thresholded replies: as many values, on its own host.
  const double r1 = busy(reply2, shard_host) - busy(base, shard_host);
  CHECK(r1 == doctest::Approx(d1).epsilon(0.02));
  // The trainer's host only gets the few more progress ticks of a longer run
  // (sim.message-us each).
  CHECK(std::abs(busy(reply2, trainer_host) - busy(base, trainer_host)) < 0.01 * r1);
}

TEST_CASE("virtual cluster: a foreground trainer pays for the time it waits") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=4", "--cluster.workers=2",
                                        "--cluster.embedding-shards=2", "--net.enabled=true"};
  const auto free_run = run(d, test::with(cmd, {"--sync.algorithm=none"}));
  const auto blocked = run(d, test::with(cmd, {"--sync.algorithm=fr-easgd", "--sync.k=1"}));
  REQUIRE(blocked.sync.worker_blocked_fraction > 0.01);
  // Wall time on shared cores hid this (a blocked trainer's core went to
  // another); on the virtual clock the waits lengthen the run.
  CHECK(blocked.examples_per_second() < free_run.examples_per_second());
}

TEST_CASE("virtual cluster: a trainer killed in an S-MA ring of 4 leaves, and the run replays") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=4", "--cluster.workers=2",
                                        "--cluster.embedding-shards=2", "--sync.algorithm=s-ma",
                                        "--faults.kill=[trainer-1@0.5]"};
  const auto a = run(d, cmd);
  REQUIRE(a.lost_trainers.size() == 1);
  CHECK(a.lost_trainers[0].rfind("trainer 1 lost after", 0) == 0);
  CHECK(a.examples < 8000);      // trainer 1's remaining part was not trained
  CHECK(a.examples > 5800);      // the other three parts were (2000 each, about)
  CHECK(a.sync.rounds > 0);      // the ring went on with three
  CHECK(runtime::to_json(run(d, cmd)) == runtime::to_json(a));
}

TEST_CASE("virtual cluster: a killed embedding shard ends the job with an error naming it") {
  data_files d;
  const auto cfg = config(d, {"--cluster.trainers=2", "--cluster.embedding-shards=2",
                              "--faults.kill=[embedding-shard-1@0.01s]"});
  runtime::run_metrics out;
  const auto failure = test::try_cluster(cfg, out);
  REQUIRE(failure);
  CHECK(failure->find("embedding shard 1") != std::string::npos);
}

TEST_CASE("virtual cluster: checkpoint cuts while training replay to the byte") {
  data_files d;
  auto cmd = [&](const std::string& dir) {
    return std::vector<std::string>{"--cluster.trainers=2", "--cluster.workers=2",
                                    "--sync.algorithm=s-easgd", "--net.enabled=true",
                                    "--checkpoint.dir=" + (d.dir / dir).string(),
                                    "--checkpoint.every-examples=2000",
                                    "--checkpoint.keep=100"};
  };
  const auto a = run(d, cmd("a"));
  REQUIRE(a.checkpoint);
  CHECK(a.checkpoint->count >= 2);
  CHECK(runtime::to_json(run(d, cmd("b"))) == runtime::to_json(a));
}

TEST_CASE("virtual cluster: training time starts once the shards have their tables") {
  // sim.cost=measured charges each shard's table initialisation to its host:
  // drawing 20000 x 26 x 16 random floats, 52 ms of thread CPU time here
  // (69 ms under ASan), never under 10 ms. The training time starts after
  // every shard answered a readiness lookup, as on the wall clock and in
  // the sequential engine; the run's virtual seconds keep the
  // initialisation. (Before, training time and virtual seconds differed by
  // the stop alone: 15 us.) Under sim.cost=model the initialisation is
  // free: only the stop is left over.
  data_files d;
  const auto measured = run(d, {"--cluster.trainers=2", "--sim.cost=measured"});
  INFO("training " << measured.seconds << " s of " << measured.sim->virtual_seconds << " s");
  CHECK(measured.examples == 8000);
  CHECK(measured.sim->virtual_seconds - measured.seconds > 0.010);
  const auto model = run(d, {"--cluster.trainers=2"});
  CHECK(model.sim->virtual_seconds - model.seconds < 0.001);
}

TEST_CASE("virtual cluster: sim.placement=one-host puts every role on host 0") {
  // As on one real machine: the trainers, shards and syncers share host 0's
  // cores, no other host runs anything, and nothing crosses the network model.
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=2", "--sync.algorithm=s-easgd",
                                        "--net.enabled=true", "--sim.cores-per-host=1"};
  const auto apart = run(d, cmd);
  const auto one = run(d, test::with(cmd, {"--sim.placement=one-host"}));
  CHECK(one.examples == 8000);
  CHECK(apart.sim->host_busy_seconds.size() > 3); // 2 trainers, their shards
  REQUIRE(one.sim->host_busy_seconds.size() == 1);
  CHECK(one.sim->host_busy_seconds[0] > 0);
  REQUIRE(one.net);
  CHECK(one.net->bytes == 0);
  REQUIRE(apart.net);
  CHECK(apart.net->bytes > 0);
  // Two trainers sharing one core take about twice as long as on a core each.
  CHECK(one.seconds > 1.5 * apart.seconds);
}

TEST_CASE("virtual cluster: the run's scheduler decides when a syncer waiting for a core runs") {
  // Two trainers of one worker and their S-EASGD syncers on one host of two
  // cores, 62 batches, with a pause of 1 ms after each round. CAF's work
  // stealing with unbounded turns (the default): a worker's lookups and the
  // shards' replies run next on the core that sent them, and a syncer paced
  // by a timer waits at the back of a queue the chain refills; with one
  // queue first in first out (sharing), or a thread handed on after each
  // message, it runs as soon as it is due: a round every batch or two.
  data_files d;
  const std::vector<std::string> no_pause = {"--cluster.trainers=2", "--sync.algorithm=s-easgd",
                                             "--sim.placement=one-host", "--sim.cores-per-host=2"};
  // Without the pause the batch gap paces alone, and the worker whose batch
  // completes it wakes the syncer by a message: a round after every batch
  // under stealing and under sharing, 64 each (with the 1 ms pacing timer
  // the wake replaced, stealing ran fewer than 15 here).
  for (const char* policy : {"--scheduler.policy=stealing", "--scheduler.policy=sharing"})
    CHECK(run(d, test::with(no_pause, {policy})).sync.rounds >= 60);
  const auto cmd = test::with(no_pause, {"--sync.min-pause-ms=1"});
  const auto stealing = run(d, cmd);
  const auto sharing = run(d, test::with(cmd, {"--scheduler.policy=sharing"}));
  const auto handed_on = run(d, test::with(cmd, {"--scheduler.max-throughput=1"}));
  for (const auto* m : {&stealing, &sharing, &handed_on})
    CHECK(m->examples == 8000);
  INFO("rounds: stealing " << stealing.sync.rounds << ", sharing " << sharing.sync.rounds
                           << ", one message a turn " << handed_on.sync.rounds);
  CHECK(sharing.sync.rounds > 30);
  CHECK(handed_on.sync.rounds > 30);
  CHECK(stealing.sync.rounds < 15);
}

TEST_CASE("virtual cluster: sim.machine-cores puts every host on one machine's cores") {
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=2", "--sync.algorithm=none",
                                        "--sim.cores-per-host=1"};
  const auto apart = run(d, cmd);
  // A machine with more cores than all hosts together changes nothing.
  CHECK(runtime::to_json(apart) ==
        runtime::to_json(run(d, test::with(cmd, {"--sim.machine-cores=64"}))));
  // One core for all: no two handlers at once, anywhere. (A handler counts
  // when it starts: the last one, a batch, under 1 % of the run, may end
  // after training's end.)
  const auto one = run(d, test::with(cmd, {"--sim.machine-cores=1"}));
  CHECK(one.examples == 8000);
  auto cores_busy = [](const runtime::run_metrics& m) {
    double s = 0;
    for (double b : m.sim->host_busy_seconds)
      s += b;
    return s / m.sim->virtual_seconds;
  };
  CHECK(cores_busy(one) > 0.9);
  CHECK(cores_busy(one) < 1.01);
  CHECK(cores_busy(apart) > 1.5); // the two trainers' hosts side by side
  CHECK(one.seconds > 1.5 * apart.seconds); // their batches in turn
}

TEST_CASE("virtual cluster: a message between hosts costs sim.remote-* on each side") {
  data_files d;
  const auto& cmd = messages_only;
  const auto base = run(d, cmd);
  const auto us10 = run(d, test::with(cmd, {"--sim.remote-message-us=10"}));
  const auto us20 = run(d, test::with(cmd, {"--sim.remote-message-us=20"}));
  const auto per_byte = run(d, test::with(cmd, {"--sim.remote-gbps=1"}));
  REQUIRE(busy(base) < 1e-7); // against 2 x 10 us x 100+ messages below
  REQUIRE(us10.net);
  REQUIRE(per_byte.net);
  REQUIRE(us10.net->messages > 100);
  // Per message: twice the charge, twice the time; 10 us on the sender's
  // core and 10 us on the receiver's for each message the network carried
  // (its count ends with training; the hosts' time also counts the stop's
  // few messages after it).
  CHECK(busy(us20) - busy(base) == doctest::Approx(2 * (busy(us10) - busy(base))).epsilon(1e-9));
  const double counted = (busy(us10) - busy(base)) / (2 * 10e-6);
  CHECK(counted >= double(us10.net->messages) - 1e-6);
  CHECK(counted <= double(us10.net->messages) + 8);
  CHECK(counted == doctest::Approx(std::round(counted)).epsilon(1e-9)); // whole messages
  // Per byte: each side pays the message's wire bytes at 1 GB/s.
  const double bytes = (busy(per_byte) - busy(base)) * 1e9 / 2;
  CHECK(bytes >= double(per_byte.net->bytes) * (1 - 1e-9));
  CHECK(bytes <= double(per_byte.net->bytes) * 1.01);
  CHECK(us10.seconds > base.seconds);
  // One host: nothing crosses, nothing is charged.
  const auto one = test::with(cmd, {"--sim.placement=one-host", "--sim.cores-per-host=3"});
  CHECK(runtime::to_json(run(d, one)) ==
        runtime::to_json(run(d, test::with(one, {"--sim.remote-message-us=10"}))));
}

TEST_CASE("virtual cluster: a side whose I/O lane is busy pays sim.remote-streamed-message-us") {
  data_files d;
  const auto& cmd = messages_only;
  const auto base = run(d, cmd);
  const auto us10 = run(d, test::with(cmd, {"--sim.remote-message-us=10"}));
  const auto streamed = test::with(cmd, {"--sim.remote-message-us=10",
                                         "--sim.remote-streamed-message-us=2"});
  const auto s2 = run(d, streamed);
  REQUIRE(us10.net);
  REQUIRE(s2.net);
  const auto n = double(s2.net->messages);
  REQUIRE(n > 100);
  // Each side of each message pays 10 us (its lane idle) or 2 us (busy): 8
  // us less per awake side, whole sides; some of each kind.
  const double extra = busy(s2) - busy(base);
  CHECK(extra > 2 * 2e-6 * n);
  CHECK(extra < busy(us10) - busy(base));
  const double awake_sides = (busy(us10) - busy(base) - extra) / 8e-6;
  CHECK(awake_sides >= 1);
  CHECK(awake_sides == doctest::Approx(std::round(awake_sides)).epsilon(1e-6));
  // The same price either way charges exactly the one-at-a-time term.
  const auto same = run(d, test::with(cmd, {"--sim.remote-message-us=10",
                                            "--sim.remote-streamed-message-us=10"}));
  CHECK(busy(same) == doctest::Approx(busy(us10)).epsilon(1e-12));
  CHECK(same.seconds == us10.seconds);
  // Over TLS the TLS pair's streamed term applies, not the plain one's.
  const auto tls = run(d, test::with(streamed, {"--sim.remote-tls=true",
                                                "--sim.remote-tls-message-us=10",
                                                "--sim.remote-tls-streamed-message-us=2"}));
  CHECK(runtime::to_json(tls) == runtime::to_json(s2));
}

TEST_CASE("virtual cluster: sim.remote-tls charges the TLS pair instead of the plain one") {
  data_files d;
  const auto& cmd = messages_only;
  const auto both = test::with(cmd, {"--sim.remote-message-us=10", "--sim.remote-gbps=2",
                                     "--sim.remote-tls-message-us=30",
                                     "--sim.remote-tls-gbps=0.5"});
  const auto plain = run(d, both);
  const auto tls = run(d, test::with(both, {"--sim.remote-tls=true"}));
  // The plain pair alone, and the TLS pair given as the plain one: the same
  // runs as above, so the TLS constants are what the TLS run charges.
  CHECK(runtime::to_json(plain) ==
        runtime::to_json(run(d, test::with(cmd, {"--sim.remote-message-us=10",
                                                  "--sim.remote-gbps=2"}))));
  CHECK(runtime::to_json(tls) ==
        runtime::to_json(run(d, test::with(cmd, {"--sim.remote-message-us=30",
                                                  "--sim.remote-gbps=0.5"}))));
  CHECK(busy(tls) > 2.5 * busy(plain));
  CHECK(tls.seconds > plain.seconds);
  // TLS on with a calibration's plain terms but no TLS ones: refused, named.
  const auto e = test::config_error({"--sim.remote-tls=true", "--sim.remote-message-us=10"});
  CHECK(e.find("option 'sim.remote-tls' = true (command line)") != std::string::npos);
  CHECK(e.find("sim.remote-tls-message-us, which is 0 while sim.remote-message-us is 10:") !=
        std::string::npos);
  CHECK(test::config_error({"--sim.remote-tls=true"}) == ""); // nothing priced at all
}

TEST_CASE("virtual cluster: the handlers' time by role adds up to the hosts' and names each role once") {
  // One host, no remote messages: every core second charged is a handler's,
  // so the roles' seconds sum to the host's. A shard's rows cost what
  // sim.lookup-row-ns and sim.push-row-ns say, and only the shard pays them.
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=2", "--cluster.embedding-shards=2",
                                        "--cluster.workers=2", "--sync.algorithm=s-easgd",
                                        "--sim.placement=one-host", "--sim.cores-per-host=2",
                                        "--train.max-examples=4000"};
  const auto base = run(d, test::with(cmd, {"--sim.lookup-row-ns=1000", "--sim.push-row-ns=1000"}));
  const auto& by = base.sim->busy_by_role;
  double sum = 0;
  for (const auto& [name, r] : by) {
    INFO(name);
    CHECK(name.find_first_of("0123456789") == std::string::npos); // no index: one entry a role
    CHECK(r.handlers > 0);
    sum += r.seconds;
  }
  REQUIRE(base.sim->host_busy_seconds.size() == 1);
  CHECK(sum == doctest::Approx(base.sim->host_busy_seconds[0]).epsilon(1e-9));
  for (const char* role : {"hogwild-worker", "embedding-shard", "reader", "trainer", "shadow-syncer",
                           "dense-shard"})
    CHECK_MESSAGE(by.count(role) == 1, role);
  const auto slow = run(d, test::with(cmd, {"--sim.lookup-row-ns=2000", "--sim.push-row-ns=1000"}));
  const double rows = double(base.bytes.lookup) / (4.0 * 16);
  REQUIRE(rows > 1000);
  CHECK(slow.sim->busy_by_role.at("embedding-shard").seconds -
          by.at("embedding-shard").seconds ==
        doctest::Approx(rows * 1e-6).epsilon(1e-6));
  CHECK(slow.sim->busy_by_role.at("hogwild-worker").seconds ==
        doctest::Approx(by.at("hogwild-worker").seconds).epsilon(1e-12));
}

TEST_CASE("virtual cluster: with measured costs each role also carries the model's price of its handlers") {
  // One trainer of one worker, no sync, no contention: the handlers' counted
  // work does not depend on when they run, so the measured run's model price
  // of each role is the model run's time, to the rounding, once the bare
  // handlers (sim.message-us each) are set apart. Their number may differ
  // for the worker: a batch's dense step reaches it as a message of its own
  // at the handler's end (at_handler_end), and one that comes after the
  // handler in which the worker ends (its last batch, or the one before when
  // the next rows and the end of the data came first) is never handled; which
  // ones do depends on the handlers' measured times. The reader's count moved
  // by one in 4 of 250 runs too (not traced further: a bare handler, as the
  // price check showed in those runs).
  data_files d;
  const std::vector<std::string> cmd = {"--cluster.trainers=1", "--cluster.workers=1",
                                        "--cluster.embedding-shards=2", "--sync.algorithm=none",
                                        "--sim.placement=one-host", "--train.max-examples=4000",
                                        "--sim.message-us=2"};
  const auto model = run(d, cmd);
  const auto measured = run(d, test::with(cmd, {"--sim.cost=measured"}));
  REQUIRE(model.sim);
  REQUIRE(measured.sim);
  CHECK_FALSE(model.sim->measured);
  CHECK(measured.sim->measured);
  for (const char* role : {"hogwild-worker", "reader"}) {
    INFO(role);
    const auto& m = measured.sim->busy_by_role.at(role);
    const auto& p = model.sim->busy_by_role.at(role);
    const auto dropped = std::int64_t(p.handlers) - std::int64_t(m.handlers);
    CHECK(std::abs(dropped) <= 2); // the worker: the dense steps of its last two batches
    const double bare = 2e-6; // --sim.message-us=2 (cmd above): a bare handler's price
    CHECK(m.model_seconds - double(m.handlers) * bare ==
          doctest::Approx(p.seconds - double(p.handlers) * bare).epsilon(1e-9));
    CHECK(m.bare_handlers < m.handlers);
    CHECK(m.bare_seconds <= m.seconds);
  }
  // The trainer counts no work: every handler of it is bare, priced at sim.message-us.
  const auto& t = measured.sim->busy_by_role.at("trainer");
  CHECK(t.bare_handlers == t.handlers);
  CHECK(t.bare_seconds == doctest::Approx(t.seconds).epsilon(1e-12));
  CHECK(t.model_seconds == doctest::Approx(double(t.handlers) * 2e-6).epsilon(1e-9));
  // The model run keeps its metrics bytes: no measured-only field in its JSON.
  CHECK(runtime::to_json(model).find("model_seconds") == std::string::npos);
  CHECK(runtime::to_json(measured).find("\"bare_handlers\"") != std::string::npos);
}

} // namespace virtual_cluster_test
