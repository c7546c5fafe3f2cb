#include "sim/virtual_coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>

namespace runtime {

namespace {

class impl final : public caf::blocking_actor {
public:
  impl(caf::actor_config& cfg, virtual_engine* engine) : blocking_actor(cfg), engine_(engine) {}

  void act() override {} // never runs: it lives on the caller's thread

  const char* name() const override { return "coordinator"; }

  void launch(caf::execution_unit*, bool, bool hide) override {
    if (!hide)
      register_at_system();
    initialize();
  }

  // As blocking_actor's own: messages already fetched but not yet visited
  // (uncached) are data; else wait for a new one, here by running the
  // engine until one arrives.
  void await_data() override {
    if (!mailbox().empty())
      return;
    if (!engine_->run_until([&] { return !mailbox().empty(); }))
      throw std::runtime_error("virtual clock: the coordinator waits for a message that no "
                               "actor will send (nothing is left to run)");
    // (receive's new_round fetches it from the inbox; fetching here would
    // instantiate CAF's sentinel downcast, which UBSan reports)
  }

  // The same with a deadline; the wait it allows is virtual time.
  bool await_data(timeout_type deadline) override {
    if (!mailbox().empty())
      return true;
    // CAF passes a wall-clock deadline (now + the receive's timeout). The
    // wait is that timeout less the microseconds since, rounded up to whole
    // milliseconds: the coordinator's timeouts are whole milliseconds, so the
    // virtual wait is exactly its timeout and the run replays.
    const auto left = deadline - timeout_type::clock::now();
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(
      std::max(left, decltype(left){0}));
    const auto until =
      engine_->now() + std::chrono::duration_cast<virtual_engine::duration>(wait);
    // An event at the deadline: a step never jumps past it to a later one
    // (a request's timeout long after, in a quiet cluster).
    engine_->at(until, [] {});
    engine_->run_until([&] { return !mailbox().empty() || engine_->now() >= until; });
    return !mailbox().empty();
  }

private:
  virtual_engine* engine_;
};

} // namespace

virtual_coordinator::virtual_coordinator(caf::actor_system& sys, virtual_engine& engine)
    : unit_(&sys) {
  caf::actor_config cfg{&unit_};
  auto hdl = sys.spawn_impl<impl, caf::no_spawn_options>(cfg, &engine);
  self_ = caf::actor_cast<caf::strong_actor_ptr>(std::move(hdl));
}

virtual_coordinator::~virtual_coordinator() {
  auto* x = self();
  if (!x->getf(caf::abstract_actor::is_terminated_flag))
    x->cleanup(caf::exit_reason::normal, &unit_);
}

caf::blocking_actor* virtual_coordinator::self() const {
  return static_cast<caf::blocking_actor*>(caf::actor_cast<caf::abstract_actor*>(self_));
}

} // namespace runtime
