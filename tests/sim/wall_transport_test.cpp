// The network model's transport under the wall clock (sim/wall_transport.hpp),
// driven here by CAF's deterministic scheduler and its fake clock: a message
// between two hosts arrives only once the clock has passed its transfer
// delay, in the order it was sent; a frozen host gets nothing until thawed.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/sim_host.hpp"
#include "messages/registry.hpp"
#include "sim/wall_transport.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace wall_transport_test {

namespace {

using namespace std::chrono_literals;
using log_ptr = std::shared_ptr<std::vector<int>>;

// Records every int it gets.
caf::behavior recorder(caf::event_based_actor*, log_ptr log) {
  return {[=](int x) { log->push_back(x); }};
}

// Sends each int it gets on to `to`.
caf::behavior relay(caf::event_based_actor* self, caf::actor to) {
  return {[=](int x) { self->send(to, x); }};
}

struct fixture {
  // 1 ms latency, 1 Gbit/s: an int message (24 bytes) takes 1 ms + 192 ns.
  runtime::network_model net{3, {1000.0, 1.0, 1.0}};
  runtime::wall_transport transport{&net, 3};
  actors::cluster_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  log_ptr log = std::make_shared<std::vector<int>>();

  fixture() {
    messages::register_messages(cfg);
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.fabric = &transport;
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }
  ~fixture() {
    sched->run();
    sched->clock().cancel_all();
    sched->run();
  }
  // Runs what is queued (its sends schedule their arrivals), then moves the
  // clock and runs what arrived.
  void advance(caf::timespan d) {
    sched->run();
    sched->clock().advance_time(d);
    sched->run();
  }
};

} // namespace

TEST_CASE("wall transport: a message between hosts waits for its transfer; one host is free") {
  fixture f;
  auto far = actors::spawn_role(*f.sys, 1, recorder, f.log);
  auto near = actors::spawn_role(*f.sys, 0, recorder, f.log);
  auto to_far = actors::spawn_role(*f.sys, 0, relay, far);
  auto to_near = actors::spawn_role(*f.sys, 0, relay, near);
  f.sched->run();
  caf::anon_send(to_far, 1);
  caf::anon_send(to_near, 2);
  f.sched->run();
  CHECK(*f.log == std::vector<int>{2}); // on one host: at once
  f.advance(999us);
  CHECK(*f.log == std::vector<int>{2}); // 1 ms latency not passed yet
  f.advance(2us);
  CHECK(*f.log == std::vector<int>{2, 1});
  CHECK(f.net.messages_moved() == 1);
  CHECK(f.net.bytes_moved() == 24);
  for (auto h : {far, near, to_far, to_near})
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

TEST_CASE("wall transport: per link, messages arrive in the order they were sent") {
  fixture f;
  auto far = actors::spawn_role(*f.sys, 1, recorder, f.log);
  auto a = actors::spawn_role(*f.sys, 0, relay, far);
  f.sched->run();
  for (int i = 0; i < 20; ++i)
    caf::anon_send(a, i);
  f.sched->run();
  CHECK(f.log->empty());
  f.advance(10ms);
  std::vector<int> want(20);
  for (int i = 0; i < 20; ++i)
    want[std::size_t(i)] = i;
  CHECK(*f.log == want);
  for (auto h : {far, a})
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

TEST_CASE("wall transport: a frozen host gets its messages at the thaw, in order") {
  fixture f;
  auto far = actors::spawn_role(*f.sys, 1, recorder, f.log);
  auto near = actors::spawn_role(*f.sys, 1, relay, far); // host 1 to host 1
  auto a = actors::spawn_role(*f.sys, 0, relay, far);    // host 0 to host 1
  f.sched->run();
  f.transport.freeze(1);
  caf::anon_send(a, 1);
  f.advance(5ms); // arrived, held by the freeze
  caf::anon_send(a, 2);
  caf::anon_send(near, 3); // the relay is on the frozen host: held too
  f.advance(5ms);
  CHECK(f.log->empty());
  f.transport.thaw(1);
  f.sched->run();
  CHECK(*f.log == std::vector<int>{1, 2, 3}); // 3 went through the relay after the thaw
  f.transport.thaw(1); // not frozen: nothing happens
  caf::anon_send(a, 4);
  f.advance(5ms);
  CHECK(*f.log == std::vector<int>{1, 2, 3, 4});
  for (auto h : {far, near, a})
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

} // namespace wall_transport_test
