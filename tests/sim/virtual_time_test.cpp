// The discrete-event loop of the virtual-time cluster (sim/virtual_time.hpp):
// cores, costs, messages leaving at a handler's end, timers on the virtual
// clock, and repeatable runs. The actors are real CAF actors spawned with
// actors::spawn_role on CAF's deterministic scheduler.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/sim_host.hpp"
#include "sim/virtual_time.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace virtual_time_test {

namespace {

using namespace std::chrono_literals;
using ms = std::chrono::duration<double, std::milli>;

struct event {
  std::string who;
  double start_ms;
  friend bool operator==(const event& a, const event& b) {
    return a.who == b.who && a.start_ms == b.start_ms;
  }
};
using log_ptr = std::shared_ptr<std::vector<event>>;

std::string show(const std::vector<event>& log) {
  std::string out;
  for (const auto& e : log)
    out += e.who + "@" + std::to_string(e.start_ms) + " ";
  return out;
}

// One virtual cluster: an actor system on the deterministic scheduler and
// its engine (1 Gflop/s, so 1e6 flops is 1 ms; no fixed message cost).
struct fixture {
  explicit fixture(std::size_t cores) : fixture(settings(cores)) {}
  explicit fixture(runtime::virtual_settings s) : engine(s) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.fabric = &engine;
    sys = std::make_unique<caf::actor_system>(cfg);
    engine.attach(*sys);
  }
  ~fixture() {
    engine.run();
  }
  static runtime::virtual_settings settings(std::size_t cores) {
    runtime::virtual_settings s;
    s.cores_per_host = cores;
    s.gflops = 1;
    s.message_us = 0;
    return s;
  }
  double now_ms() const { return ms(engine.elapsed()).count(); }

  runtime::virtual_engine engine;
  actors::cluster_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  log_ptr log = std::make_shared<std::vector<event>>();
};

double start_ms(caf::event_based_actor* self, caf::actor_clock::time_point origin) {
  return ms(self->clock().now() - origin).count();
}

// Logs its start, works n ms, then tells `next` (if any).
caf::behavior worker(caf::event_based_actor* self, std::string name, log_ptr log,
                     caf::actor_clock::time_point origin, caf::actor next) {
  return {
    [=](int n) {
      log->push_back({name, start_ms(self, origin)});
      actors::count(actors::work::arithmetic, double(n) * 1e6);
      if (next)
        self->send(next, 0);
    },
  };
}

// A sink on host 1 and two workers on host 0 that tell it when they are done.
struct two_to_one {
  caf::actor sink, a, b;
  void shut_down() const {
    for (auto h : {sink, a, b})
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  }
};
two_to_one spawn_two_to_one(const fixture& f, const std::string& sink, const std::string& a,
                            const std::string& b) {
  const auto origin = f.engine.now();
  two_to_one out;
  out.sink = actors::spawn_role(*f.sys, 1, worker, sink, f.log, origin, caf::actor{});
  out.a = actors::spawn_role(*f.sys, 0, worker, a, f.log, origin, out.sink);
  out.b = actors::spawn_role(*f.sys, 0, worker, b, f.log, origin, out.sink);
  return out;
}

// Sends itself `left` ticks, `gap` apart, on the actor clock.
caf::behavior ticker(caf::event_based_actor* self, int left) {
  auto remaining = std::make_shared<int>(left);
  return {
    [=](caf::tick_atom) {
      if (--*remaining > 0)
        self->delayed_send(self, 3ms, caf::tick_atom::value);
    },
  };
}

} // namespace

TEST_CASE("virtual time: a handler holds one core for its cost") {
  for (std::size_t cores : {1, 2}) {
    CAPTURE(cores);
    fixture f(cores);
    const auto roles = spawn_two_to_one(f, "sink", "a", "b");
    caf::anon_send(roles.a, 5);
    caf::anon_send(roles.b, 5);
    f.engine.run();
    // One core: b waits for a's 5 ms. Two: both start at once. The sink
    // (another host) gets each message when its sender's handler ends.
    // (On one core a and b wait in its queue in the order they were sent.)
    const std::vector<event> want =
      cores == 1 ? std::vector<event>{{"a", 0}, {"b", 5}, {"sink", 5}, {"sink", 10}}
                 : std::vector<event>{{"a", 0}, {"b", 0}, {"sink", 5}, {"sink", 5}};
    CAPTURE(show(*f.log));
    CHECK(*f.log == want);
    CHECK(f.engine.host_busy().at(0) == doctest::Approx(0.010));
    roles.shut_down();
  }
}

TEST_CASE("virtual time: one actor runs one handler at a time, on any number of cores") {
  fixture f(4);
  const auto origin = f.engine.now();
  auto a = actors::spawn_role(*f.sys, 0, worker, std::string("a"), f.log, origin, caf::actor{});
  for (int i = 0; i < 3; ++i)
    caf::anon_send(a, 2);
  f.engine.run();
  const std::vector<event> want = {{"a", 0}, {"a", 2}, {"a", 4}};
  CAPTURE(show(*f.log));
  CHECK(*f.log == want);
  CHECK(f.now_ms() == doctest::Approx(4.0)); // the last handler started at 4 ms
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

TEST_CASE("virtual time: timers run on the virtual clock") {
  fixture f(1);
  auto t = actors::spawn_role(*f.sys, 0, ticker, 1000);
  caf::anon_send(t, caf::tick_atom::value);
  const auto wall0 = std::chrono::steady_clock::now();
  f.engine.run();
  CHECK(f.now_ms() == doctest::Approx(999 * 3.0)); // 999 gaps of 3 ms, no wall waiting
  CHECK(std::chrono::steady_clock::now() - wall0 < 2s);
  caf::anon_send_exit(t, caf::exit_reason::user_shutdown);
}

namespace {

// A token passed around a ring of `n` actors on two single-core hosts; each
// hop works a cost drawn from the run's seed. Returns the log.
std::vector<event> ring_run(std::uint64_t seed, double* end_ms) {
  fixture f(1);
  const auto origin = f.engine.now();
  auto costs = std::make_shared<std::uint64_t>(seed);
  std::vector<caf::actor> ring(6);
  auto hop = [costs](caf::event_based_actor* self, std::string name, log_ptr log,
                     caf::actor_clock::time_point origin,
                     std::shared_ptr<caf::actor> next) -> caf::behavior {
    return {
      [=](int left) {
        log->push_back({name, start_ms(self, origin)});
        *costs = *costs * 6364136223846793005ULL + 1442695040888963407ULL;
        actors::count(actors::work::arithmetic, double((*costs >> 33) % 1000) * 1e3); // 0-1 ms
        if (left > 0) {
          self->send(*next, left - 1);
          self->send(*next, left > 1 ? -1 : 0); // a second, short message
        }
      },
    };
  };
  std::vector<std::shared_ptr<caf::actor>> next(ring.size());
  for (auto& n : next)
    n = std::make_shared<caf::actor>();
  for (std::size_t i = 0; i < ring.size(); ++i)
    ring[i] = actors::spawn_role(*f.sys, i % 2, hop, "r" + std::to_string(i), f.log, origin,
                                 next[i]);
  for (std::size_t i = 0; i < ring.size(); ++i)
    *next[i] = ring[(i + 1) % ring.size()];
  caf::anon_send(ring[0], 300);
  f.engine.run();
  *end_ms = f.now_ms();
  for (auto& n : next)
    *n = caf::actor{};
  for (auto& r : ring)
    caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
  return *f.log;
}

} // namespace

TEST_CASE("virtual time: the same run gives the same events at the same virtual times") {
  double end1 = 0, end2 = 0, end3 = 0;
  const auto a = ring_run(7, &end1);
  const auto b = ring_run(7, &end2);
  const auto c = ring_run(8, &end3);
  REQUIRE(a.size() > 300);
  CHECK(a == b);
  CHECK(end1 == end2);
  CHECK(end1 > 0);
  CHECK(!(a == c)); // another seed, other costs: the check can fail
}

namespace {

// Logs its start, works n ms, then tells every actor in `next`.
caf::behavior fan(caf::event_based_actor* self, std::string name, log_ptr log,
                  caf::actor_clock::time_point origin, std::vector<caf::actor> next) {
  return {
    [=](int n) {
      log->push_back({name, start_ms(self, origin)});
      actors::count(actors::work::arithmetic, double(n) * 1e6);
      for (const auto& x : next)
        self->send(x, 0);
    },
  };
}

} // namespace

TEST_CASE("virtual time: a message between hosts pays the network after its handler's end") {
  fixture f(1);
  // 1 ms latency, 1 Gbit/s: an int message (16 + 8 bytes = 192 bits) spends
  // 192 ns on the wire.
  runtime::network_model net(2, {1000.0, 1.0, 1.0});
  f.engine.set_network(&net);
  const auto origin = f.engine.now();
  auto remote = actors::spawn_role(*f.sys, 1, worker, std::string("remote"), f.log, origin,
                                   caf::actor{});
  auto local = actors::spawn_role(*f.sys, 0, worker, std::string("local"), f.log, origin,
                                  caf::actor{});
  auto a = actors::spawn_role(*f.sys, 0, fan, std::string("a"), f.log, origin,
                              std::vector<caf::actor>{remote, local});
  caf::anon_send(a, 5);
  f.engine.run();
  REQUIRE(f.log->size() == 3);
  CHECK((*f.log)[0] == event{"a", 0});
  CHECK((*f.log)[1] == event{"local", 5}); // same host: at a's end
  CHECK((*f.log)[2].who == "remote");
  CHECK((*f.log)[2].start_ms == doctest::Approx(5 + 1 + 0.000192).epsilon(1e-9));
  CHECK(net.messages_moved() == 1); // the local message never touched the network
  CHECK(net.bytes_moved() == 24);
  for (auto h : {remote, local, a})
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  f.engine.set_network(nullptr); // net goes first
}

TEST_CASE("virtual time: a NIC sends messages in the order they leave, not the order their "
          "handlers ran") {
  fixture f(2);
  runtime::network_model net(2, {1000.0, 1.0, 1.0}); // 1 ms latency, 192 ns per int message
  f.engine.set_network(&net);
  const auto roles = spawn_two_to_one(f, "remote", "slow", "quick");
  // Both start at 0 on host 0's two cores; the slow one's handler runs first
  // and its message leaves at 10 ms, the quick one's at 1 ms.
  caf::anon_send(roles.a, 10);
  caf::anon_send(roles.b, 1);
  f.engine.run();
  REQUIRE(f.log->size() == 4);
  CHECK((*f.log)[0] == event{"slow", 0});
  CHECK((*f.log)[1] == event{"quick", 0});
  // The quick message is not queued behind the slow one, which left later
  // (a NIC holding the path from when the slow handler ran would deliver it
  // at 10 + 1 ms).
  CHECK((*f.log)[2].start_ms == doctest::Approx(1 + 1 + 0.000192).epsilon(1e-9));
  CHECK((*f.log)[3].start_ms == doctest::Approx(10 + 1 + 0.000192).epsilon(1e-9));
  CHECK(net.messages_moved() == 2);
  roles.shut_down();
  f.engine.set_network(nullptr);
}

TEST_CASE("virtual time: a frozen host starts nothing until the freeze ends") {
  fixture f(2);
  const auto origin = f.engine.now();
  auto a = actors::spawn_role(*f.sys, 0, worker, std::string("a"), f.log, origin, caf::actor{});
  auto b = actors::spawn_role(*f.sys, 1, worker, std::string("b"), f.log, origin, caf::actor{});
  f.engine.freeze(0, origin + 7ms);
  caf::anon_send(a, 1);
  caf::anon_send(b, 1);
  caf::anon_send(a, 1);
  f.engine.run();
  const std::vector<event> want = {{"b", 0}, {"a", 7}, {"a", 8}};
  CAPTURE(show(*f.log));
  CHECK(*f.log == want);
  for (auto h : {a, b})
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

namespace {

// Starts of 20 handlers of 10 ms each, one after another, with `jitter`.
std::vector<double> jittered_starts(double jitter, std::uint64_t seed) {
  auto s = fixture::settings(1);
  s.jitter = jitter;
  s.seed = seed;
  fixture f(s);
  const auto origin = f.engine.now();
  auto a = actors::spawn_role(*f.sys, 0, worker, std::string("a"), f.log, origin, caf::actor{});
  for (int i = 0; i < 20; ++i)
    caf::anon_send(a, 10);
  f.engine.run();
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  std::vector<double> out;
  for (const auto& e : *f.log)
    out.push_back(e.start_ms);
  return out;
}

} // namespace

TEST_CASE("virtual time: jitter varies handler costs within bounds, repeatably by seed") {
  const auto plain = jittered_starts(0, 1);
  const auto a = jittered_starts(0.3, 1);
  REQUIRE(a.size() == 20);
  CHECK(plain[19] == doctest::Approx(190.0));
  bool varied = false;
  for (std::size_t i = 1; i < a.size(); ++i) {
    const double gap = a[i] - a[i - 1];
    CHECK(gap >= 7.0 - 1e-9); // 10 ms x (1 - 0.3)
    CHECK(gap < 13.0);        // 10 ms x (1 + 0.3)
    varied = varied || std::abs(gap - 10.0) > 0.1;
  }
  CHECK(varied);
  CHECK(jittered_starts(0.3, 1) == a);  // the same seed: the same run
  CHECK(jittered_starts(0.3, 2) != a);  // another seed: other costs
}

TEST_CASE("virtual time: a message sent from a handler runs next on its sender's core, as CAF's "
          "work stealing runs it; with sharing it waits its turn") {
  for (const bool stealing : {true, false}) {
    CAPTURE(stealing);
    auto s = fixture::settings(1);
    s.stealing = stealing;
    fixture f(s);
    const auto origin = f.engine.now();
    auto c = actors::spawn_role(*f.sys, 0, worker, std::string("c"), f.log, origin,
                                caf::actor{});
    auto a = actors::spawn_role(*f.sys, 0, fan, std::string("a"), f.log, origin,
                                std::vector<caf::actor>{c});
    auto b = actors::spawn_role(*f.sys, 0, worker, std::string("b"), f.log, origin,
                                caf::actor{});
    caf::anon_send(a, 1); // from outside: a, then b, at the back of the queue
    caf::anon_send(b, 1);
    f.engine.run();
    // a's message to c, sent at a's end (1 ms): stealing puts c at the front
    // of the core's queue, ahead of b, which has waited since 0; sharing
    // behind it.
    const std::vector<event> want = stealing
                                      ? std::vector<event>{{"a", 0}, {"c", 1}, {"b", 1}}
                                      : std::vector<event>{{"a", 0}, {"b", 1}, {"c", 2}};
    CAPTURE(show(*f.log));
    CHECK(*f.log == want);
    for (auto h : {a, b, c})
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("virtual time: an actor keeps its core while its mailbox holds messages, up to "
          "max-throughput a turn") {
  for (const std::size_t turn : {0, 1}) {
    CAPTURE(turn);
    auto s = fixture::settings(1);
    s.max_throughput = turn;
    fixture f(s);
    const auto origin = f.engine.now();
    auto a = actors::spawn_role(*f.sys, 0, worker, std::string("a"), f.log, origin,
                                caf::actor{});
    auto b = actors::spawn_role(*f.sys, 0, worker, std::string("b"), f.log, origin,
                                caf::actor{});
    caf::anon_send(a, 1);
    caf::anon_send(b, 1);
    caf::anon_send(a, 1); // in a's mailbox: a is queued once
    f.engine.run();
    // CAF's default (0): a handles both before b; one message a turn: a
    // goes to the back of the queue, behind b.
    const std::vector<event> want = turn == 0
                                      ? std::vector<event>{{"a", 0}, {"a", 1}, {"b", 2}}
                                      : std::vector<event>{{"a", 0}, {"b", 1}, {"a", 2}};
    CAPTURE(show(*f.log));
    CHECK(*f.log == want);
    for (auto h : {a, b})
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  }
}

namespace {

// Works `before` ms, tells each of `next`, then works `after` ms.
caf::behavior split(caf::event_based_actor* self, std::string name, log_ptr log,
                    caf::actor_clock::time_point origin, std::vector<caf::actor> next,
                    int before, int after) {
  return {
    [=](int) {
      log->push_back({name, start_ms(self, origin)});
      actors::count(actors::work::arithmetic, double(before) * 1e6);
      for (const auto& x : next)
        self->send(x, 0);
      actors::count(actors::work::arithmetic, double(after) * 1e6);
    },
  };
}

} // namespace

TEST_CASE("virtual time: sim.send-at=work lets a message leave once the work before it is done, "
          "so the host's other core takes its receiver while the sender runs") {
  for (const bool at_work : {false, true}) {
    CAPTURE(at_work);
    auto s = fixture::settings(2);
    s.send_at_work = at_work;
    s.jitter = 0.5; // the handler's cost and the send's time scale alike
    fixture f(s);
    const auto origin = f.engine.now();
    auto q = actors::spawn_role(*f.sys, 0, worker, std::string("q"), f.log, origin,
                                caf::actor{});
    auto far = actors::spawn_role(*f.sys, 1, worker, std::string("far"), f.log, origin,
                                  caf::actor{});
    auto p = actors::spawn_role(*f.sys, 0, split, std::string("p"), f.log, origin,
                                std::vector<caf::actor>{q, far}, 1, 3);
    caf::anon_send(p, 0);
    f.engine.run();
    CAPTURE(show(*f.log));
    REQUIRE(f.log->size() == 3);
    CHECK(f.log->at(0).who == "p"); // at 0
    auto start_of = [&](const std::string& who) {
      const auto e = std::find_if(f.log->begin(), f.log->end(),
                                  [&](const event& x) { return x.who == who; });
      REQUIRE(e != f.log->end());
      return e->start_ms;
    };
    // p's cost: 4 ms x (1 + jitter x u), its send after a quarter of it; the
    // role on another host gets it at p's end either way.
    const double p_end = start_of("far");
    CHECK(p_end > 2.0);
    CHECK(p_end < 6.0);
    if (at_work)
      CHECK(start_of("q") == doctest::Approx(p_end / 4)); // the other core, at once
    else
      CHECK(start_of("q") == doctest::Approx(p_end)); // p's core, after p
    for (auto h : {p, q, far})
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  }
}

} // namespace virtual_time_test
