// actors::off_handler (actors/off_handler.hpp): work a role hands off its
// handler. Under the discrete-event engine it runs inside the handler, its
// counted work charged there, then `finish`; with real threads on a thread
// of its own, which then calls `notify`, and `finish` is not called.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <caf/all.hpp>

#include "actors/off_handler.hpp"
#include "actors/sim_host.hpp"
#include "sim/virtual_time.hpp"

namespace {

using ms = std::chrono::duration<double, std::milli>;

struct seen {
  std::atomic<int> work{0}, notify{0}, finish{0};
  std::thread::id handler_thread, work_thread;
  double finish_ms = -1, next_line_ms = -1; // the actor clock at finish and after the call
};

// On any int: hands off 3 ms of counted work (1 Gflop/s below).
caf::behavior role(caf::event_based_actor* self, std::shared_ptr<seen> s,
                   caf::actor_clock::time_point origin) {
  return {
    [=](int) {
      s->handler_thread = std::this_thread::get_id();
      auto now = [=] { return ms(self->clock().now() - origin).count(); };
      auto t = actors::off_handler(
        self->system(),
        [s] {
          s->work_thread = std::this_thread::get_id();
          actors::count(actors::work::arithmetic, 3e6);
          ++s->work;
        },
        [s] { ++s->notify; },
        [s, now] {
          s->finish_ms = now();
          ++s->finish;
        });
      s->next_line_ms = now();
      if (t.joinable())
        t.join();
    },
  };
}

} // namespace

TEST_CASE("off_handler: under the virtual engine the work runs in the handler, charged, then "
          "finish") {
  runtime::virtual_settings vs;
  vs.cores_per_host = 1;
  vs.gflops = 1;
  vs.message_us = 0;
  runtime::virtual_engine engine(vs);
  actors::cluster_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  cfg.fabric = &engine;
  caf::actor_system sys{cfg};
  engine.attach(sys);
  auto s = std::make_shared<seen>();
  auto a = actors::spawn_role(sys, 0, role, s, engine.now());
  caf::anon_send(a, 1);
  engine.run();
  CHECK(s->work == 1);
  CHECK(s->finish == 1);
  CHECK(s->notify == 0);
  CHECK(s->work_thread == s->handler_thread);
  CHECK(s->finish_ms == doctest::Approx(3.0)); // after the 3 ms the work counted
  CHECK(s->next_line_ms == doctest::Approx(3.0));
  CHECK(engine.host_busy().at(0) == doctest::Approx(0.003)); // its handler held the core 3 ms
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  engine.run();
}

TEST_CASE("off_handler: with real threads the work runs on a thread of its own, then notify") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto s = std::make_shared<seen>();
  auto a = actors::spawn_role(sys, 0, role, s, sys.clock().now());
  caf::anon_send(a, 1);
  for (int i = 0; i < 500 && s->notify == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  sys.await_all_actors_done();
  CHECK(s->work == 1);
  CHECK(s->notify == 1);
  CHECK(s->finish == 0);
  CHECK(s->work_thread != s->handler_thread);
}
