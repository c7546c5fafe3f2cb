// The one-process wall-clock cluster's CAF scheduler settings
// (cluster/scheduler_setup.hpp).
#include <doctest/doctest.h>

#include <chrono>

#include <caf/actor_system_config.hpp>
#include <caf/config_value.hpp>
#include <caf/settings.hpp>

#include "cluster/scheduler_setup.hpp"

namespace {

runtime::train_config with_threads(std::size_t threads, runtime::scheduler_policy policy =
                                                            runtime::scheduler_policy::stealing) {
  runtime::train_config c;
  c.cluster.max_threads = threads;
  c.cluster.scheduler = policy;
  return c;
}

// custom_options_ is protected: what CAF declares, read through a subclass.
struct declaring_config : caf::actor_system_config {
  bool declares(const char* key) const {
    return custom_options_.qualified_name_lookup(key) != nullptr;
  }
};

template <class T>
T setting(const caf::actor_system_config& cfg, const char* key, T fallback) {
  return caf::get_or(cfg, key, fallback);
}

} // namespace

TEST_CASE("scheduler setup: idle threads poll longer only when the threads fit the cores") {
  CHECK(runtime::polls_longer(with_threads(2), 2));
  CHECK(runtime::polls_longer(with_threads(1), 2));
  CHECK(!runtime::polls_longer(with_threads(4), 2)); // oversubscribed
}

TEST_CASE("scheduler setup: the settings are CAF's own options, with the values CAF reads") {
  declaring_config cfg;
  runtime::configure_wall_scheduler(cfg, with_threads(2), 2);
  // CAF 0.17 ignores a key it does not know: each one must be declared.
  for (const char* key :
       {"scheduler.max-threads", "work-stealing.aggressive-poll-attempts",
        "work-stealing.aggressive-steal-interval", "work-stealing.moderate-steal-interval",
        "work-stealing.moderate-sleep-duration"})
    CHECK_MESSAGE(cfg.declares(key), key);
  CHECK(setting<std::size_t>(cfg, "scheduler.max-threads", 0) == 2);
  CHECK(setting<std::size_t>(cfg, "work-stealing.aggressive-poll-attempts", 0) == 20000);
  CHECK(setting<std::size_t>(cfg, "work-stealing.aggressive-steal-interval", 0) == 1);
  CHECK(setting<std::size_t>(cfg, "work-stealing.moderate-steal-interval", 0) == 1);
  CHECK(setting<caf::timespan>(cfg, "work-stealing.moderate-sleep-duration", caf::timespan{0}) ==
        std::chrono::microseconds(10));

  caf::actor_system_config over; // 4 threads on 2 cores: CAF's defaults stay
  runtime::configure_wall_scheduler(over, with_threads(4), 2);
  CHECK(setting<std::size_t>(over, "scheduler.max-threads", 0) == 4);
  CHECK(setting<std::size_t>(over, "work-stealing.aggressive-poll-attempts", 7) == 7);
}

TEST_CASE("scheduler setup: scheduler.max-throughput reaches CAF's own option, on the wall "
          "clock and on a node; 0 keeps CAF's default") {
  declaring_config cfg;
  auto c = with_threads(2);
  c.cluster.max_throughput = 1;
  runtime::configure_wall_scheduler(cfg, c, 2);
  CHECK(cfg.declares("scheduler.max-throughput"));
  CHECK(setting<std::size_t>(cfg, "scheduler.max-throughput", 0) == 1);
  declaring_config node;
  runtime::configure_node_scheduler(node, 1, 3);
  CHECK(setting<std::size_t>(node, "scheduler.max-throughput", 0) == 3);
  caf::actor_system_config plain; // CAF's default: an actor handles all its mailbox holds
  runtime::configure_wall_scheduler(plain, with_threads(2), 2);
  const auto caf_default =
    setting<std::size_t>(caf::actor_system_config{}, "scheduler.max-throughput", 7);
  CHECK(setting<std::size_t>(plain, "scheduler.max-throughput", 7) == caf_default);
}

TEST_CASE("scheduler setup: a node of one thread sleeps after CAF's quick polls and decodes "
          "in the middleman; one of more threads keeps CAF's polling and BASP workers") {
  declaring_config one;
  runtime::configure_node_scheduler(one, 1);
  CHECK(one.declares("work-stealing.moderate-poll-attempts"));
  CHECK(setting<std::size_t>(one, "scheduler.max-threads", 0) == 1);
  CHECK(setting<std::size_t>(one, "work-stealing.moderate-poll-attempts", 7) == 0);
  CHECK(one.declares("middleman.workers"));
  CHECK(setting<std::size_t>(one, "middleman.workers", 7) == 0); // decoded in the middleman
  caf::actor_system_config two;
  runtime::configure_node_scheduler(two, 2);
  CHECK(setting<std::size_t>(two, "scheduler.max-threads", 0) == 2);
  CHECK(setting<std::size_t>(two, "work-stealing.moderate-poll-attempts", 7) == 7);
  CHECK(setting<std::size_t>(two, "middleman.workers", 7) == 7); // CAF's BASP workers
}
