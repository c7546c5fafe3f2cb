// actors::at_handler_end (actors/sim_host.hpp): a role's effect that is due
// at the end of its handler. Under the discrete-event engine it lands at the
// handler's end event, in a turn of the role's own; without a fabric (real
// threads) at once. A deferred call another actor sends is not run.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/sim_host.hpp"
#include "sim/virtual_time.hpp"

// (a namespace of its own: the suite compiles as a unity build under SS_UNITY)
namespace at_handler_end_test {

namespace {

using ms = std::chrono::duration<double, std::milli>;
using log_ptr = std::shared_ptr<std::vector<std::string>>;

// On `work_ms`: works that long (1 Gflop/s in the fixture below), then
// defers "effect@T" (T: the actor clock when it runs) and logs
// "sent@T" right after the call.
caf::behavior deferring(caf::event_based_actor* self, log_ptr log,
                        caf::actor_clock::time_point origin) {
  auto at = [=] { return std::to_string(int(ms(self->clock().now() - origin).count())); };
  return {
    [=](int work_ms) {
      actors::count(actors::work::arithmetic, double(work_ms) * 1e6);
      actors::at_handler_end(self, [=] { log->push_back("effect@" + at()); });
      log->push_back("sent@" + at());
    },
  };
}

// Sends `to` a deferred call of its own, as if it were `to`'s.
caf::behavior forger(caf::event_based_actor*, log_ptr log) {
  return {
    [=](const caf::actor& to) {
      caf::anon_send(to, actors::deferred_call{
                           std::make_shared<std::function<void()>>([=] { log->push_back("forged"); })});
    },
  };
}

struct virtual_cluster {
  virtual_cluster() : engine(settings()) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.fabric = &engine;
    sys = std::make_unique<caf::actor_system>(cfg);
    engine.attach(*sys);
  }
  ~virtual_cluster() { engine.run(); }
  static runtime::virtual_settings settings() {
    runtime::virtual_settings s;
    s.cores_per_host = 1;
    s.gflops = 1;
    s.message_us = 0;
    return s;
  }
  runtime::virtual_engine engine;
  actors::cluster_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
};

} // namespace

TEST_CASE("at_handler_end: under the virtual engine the effect lands at the handler's end event") {
  virtual_cluster c;
  auto log = std::make_shared<std::vector<std::string>>();
  auto a = actors::spawn_role(*c.sys, 0, deferring, log, c.engine.now());
  caf::anon_send(a, 5);
  c.engine.run();
  // The handler goes on past the call at 5 ms of its work; the effect comes
  // at 5 ms, in a turn of its own after the handler.
  CHECK(*log == std::vector<std::string>{"sent@5", "effect@5"});
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

TEST_CASE("at_handler_end: a deferred call from another actor is dropped") {
  virtual_cluster c;
  auto log = std::make_shared<std::vector<std::string>>();
  auto a = actors::spawn_role(*c.sys, 0, deferring, log, c.engine.now());
  auto f = actors::spawn_role(*c.sys, 0, forger, log);
  caf::anon_send(f, a);
  caf::anon_send(a, 1);
  c.engine.run();
  CHECK(*log == std::vector<std::string>{"sent@1", "effect@1"});
  for (const auto& h : {a, f})
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

TEST_CASE("at_handler_end: without a fabric the effect lands at once, inside the handler") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  caf::actor_system sys{cfg};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  auto log = std::make_shared<std::vector<std::string>>();
  auto a = actors::spawn_role(sys, 0, deferring, log, sys.clock().now());
  caf::anon_send(a, 5);
  sched.run();
  REQUIRE(log->size() == 2);
  CHECK(log->at(0).rfind("effect@", 0) == 0); // before the handler's next line
  CHECK(log->at(1).rfind("sent@", 0) == 0);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  sched.run();
}

} // namespace at_handler_end_test
