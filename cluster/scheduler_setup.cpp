#include "cluster/scheduler_setup.hpp"

#include <caf/atom.hpp>
#include <caf/timestamp.hpp>

namespace runtime {

bool polls_longer(const train_config& c, std::size_t hardware_cores) {
  return c.cluster.scheduler == scheduler_policy::stealing &&
         scheduler_threads(c) <= hardware_cores;
}

void configure_wall_scheduler(caf::actor_system_config& sys_cfg, const train_config& c,
                              std::size_t hardware_cores) {
  if (c.cluster.scheduler == scheduler_policy::sharing)
    sys_cfg.set("scheduler.policy", caf::atom("sharing"));
  sys_cfg.set("scheduler.max-threads", scheduler_threads(c));
  set_max_throughput(sys_cfg, c.cluster.max_throughput);
  if (polls_longer(c, hardware_cores)) {
    sys_cfg.set("work-stealing.aggressive-poll-attempts", idle_quick_polls);
    sys_cfg.set("work-stealing.aggressive-steal-interval", std::size_t{1});
    sys_cfg.set("work-stealing.moderate-steal-interval", std::size_t{1});
    sys_cfg.set("work-stealing.moderate-sleep-duration", caf::timespan{idle_poll_sleep});
  }
}

void set_max_throughput(caf::actor_system_config& sys_cfg, std::size_t messages) {
  if (messages > 0)
    sys_cfg.set("scheduler.max-throughput", messages);
}

void configure_node_scheduler(caf::actor_system_config& sys_cfg, std::size_t threads,
                              std::size_t max_throughput) {
  sys_cfg.set("scheduler.max-threads", threads);
  set_max_throughput(sys_cfg, max_throughput);
  if (threads == 1) {
    sys_cfg.set("work-stealing.moderate-poll-attempts", std::size_t{0});
    sys_cfg.set("middleman.workers", std::size_t{0});
  }
}

} // namespace runtime
