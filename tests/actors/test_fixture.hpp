#pragma once
// A doctest fixture around CAF 0.17's deterministic scheduler.
//
//   TEST_CASE_FIXTURE(actor_fixture, "shard answers a lookup") {
//     auto shard = sys.spawn(actors::embedding_shard, cfg);
//     auto rows = request<messages::embedding_rows>(shard, lookup_atom::value, req);
//     REQUIRE(rows);             // caf::expected: a value, or the error replied
//     self->send(shard, push_atom::value, grads);  // fire and forget
//     run();                     // deliver it
//   }
//
// Nothing runs until the test says so: spawn and send only enqueue; run()
// processes every queued message (single-threaded, FIFO) until no actor has
// work left; run_once() processes one. Time is fake: delayed_send and request
// timeouts fire only through advance(d) (or sched.trigger_timeout()).
//
// Requests from the test: request<R>(dest, xs...) spawns a tiny collector
// actor that sends the request (infinite timeout), runs the scheduler and
// returns the reply as caf::expected<R> (the error the actor replied, or
// errc::request_timeout "no reply" if none arrived while idle).
// request_async<R>(...) sends without running, for protocol walks where the
// test steps the actors itself; check slot->done() later.
//
// `self` is a hidden scoped_actor: use it to send messages (no blocking
// receive: under this scheduler a receive without after(0s) waits forever).
//
// Traps: run() never returns while an actor re-arms a zero-delay timer; an
// actor waiting on a delayed_send needs advance(). At the end the fixture
// drops pending timers (see the destructor); tests must drop their handles
// (locals do) or the actor system waits for those actors forever.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/expected.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include "messages/errors.hpp"
#include "messages/registry.hpp"

namespace test {

// Where a collector actor stores the one reply of its request.
template <class R>
struct reply_slot {
  std::optional<R> value;
  caf::error error;
  bool done() const { return value.has_value() || static_cast<bool>(error); }
  // The reply as caf::expected (request_timeout "no reply" when not done).
  caf::expected<R> get() const {
    if (value)
      return *value;
    if (error)
      return error;
    return messages::make_error(messages::errc::request_timeout, "no reply");
  }
};

struct actor_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
  caf::scoped_actor self;

  actor_fixture()
    : sys(init_config(cfg)),
      sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())),
      self(sys, true) {
    sched.clock().current_time += std::chrono::hours(1); // time 0 confuses timeouts
  }

  // Drains the mailboxes, then drops pending timers: a delayed message holds
  // a strong reference to its receiver, and the actor system's destructor
  // waits for every actor, so a forgotten timer would hang the test.
  ~actor_fixture() {
    run();
    sched.clock().cancel_all();
    run();
  }

  // Processes queued messages until every mailbox is empty; returns how many.
  std::size_t run() { return sched.run(); }

  // Processes one message (of the first actor with work); false if idle.
  bool run_once() { return sched.try_run_once(); }

  // Moves the fake clock forward, delivers the timers due by then and runs
  // until idle. Returns the number of messages processed.
  std::size_t advance(caf::timespan d) {
    sched.clock().advance_time(d);
    return run();
  }

  // Sends `xs...` as a request to `dest` from a fresh collector actor and
  // returns the slot its reply lands in. Runs nothing.
  template <class R, class Handle, class... Ts>
  std::shared_ptr<reply_slot<R>> request_async(const Handle& dest, Ts&&... xs) {
    auto slot = std::make_shared<reply_slot<R>>();
    auto args = std::make_tuple(std::forward<Ts>(xs)...);
    // The slot is a spawn argument, not only a capture: CAF 0.17's
    // init_fun_factory dereferences a null shared_ptr<tuple<>> for an actor
    // function without arguments (UBSan: reference binding to null pointer).
    sys.spawn(
      [dest, args](caf::event_based_actor* s, std::shared_ptr<reply_slot<R>> slot) mutable {
        std::apply(
          [&](auto&... a) {
            s->request(dest, caf::infinite, std::move(a)...)
              .then([slot](R& x) { slot->value = std::move(x); },
                    [slot](caf::error& e) { slot->error = std::move(e); });
          },
          args);
      },
      slot);
    return slot;
  }

  // request_async, then run() until idle; the reply or the error.
  template <class R, class Handle, class... Ts>
  caf::expected<R> request(const Handle& dest, Ts&&... xs) {
    auto slot = request_async<R>(dest, std::forward<Ts>(xs)...);
    run();
    return slot->get();
  }

  // The string context of a project error (make_error(code, "text")), or "".
  static std::string context_of(const caf::error& e) {
    const auto& ctx = e.context();
    return ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0) : std::string{};
  }

  // The error's code as the project's enum (none if of another category).
  static messages::errc code_of(const caf::error& e) {
    return e.category() == messages::error_category ? static_cast<messages::errc>(e.code())
                                                    : messages::errc::none;
  }

private:
  static caf::actor_system_config& init_config(caf::actor_system_config& c) {
    messages::register_messages(c);
    c.set("scheduler.policy", caf::atom("testing"));
    return c;
  }
};

} // namespace test
