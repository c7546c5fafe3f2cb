#pragma once
// The CAF scheduler of the one-process wall-clock cluster
// (cluster.mode=simulated, sim.clock=wall) and of a node (shadowsync node):
// its policy, its threads, how long its idle threads look for work before
// they sleep, and (a node) whether remote messages are decoded as jobs on it.
#include <chrono>
#include <cstddef>

#include <caf/actor_system_config.hpp>

#include "config/train_config.hpp"

namespace runtime {

// CAF's work-stealing.* settings. CAF's defaults poll 100 times (stealing
// at every 10th), then every 50 us (stealing at every 5th) for 500 polls,
// then sleep. With 2 Hogwild workers on 2 threads a thread is idle for short
// gaps (its worker waits for rows that a shard, woken on the other thread,
// is serving) and each of those steps is a sleep in the kernel: 3-5 % of the
// whole process's wall time (docs/RESULTS.md, 2b). So: idle_quick_polls
// polls stealing at each (about 1-2 ms), then a poll every idle_poll_sleep,
// stealing at each.
constexpr std::size_t idle_quick_polls = 20000;
constexpr std::chrono::microseconds idle_poll_sleep{10};

// Whether `c` on a machine of `hardware_cores` polls so: only with the
// stealing policy and when the threads do not outnumber the cores (a
// polling thread would take a core from a busy one); CAF's defaults
// otherwise.
bool polls_longer(const train_config& c, std::size_t hardware_cores);

// scheduler.max-throughput: with `messages` > 0, a scheduler thread takes
// its next job after an actor has handled that many messages in one turn;
// with 0 CAF's default stays (an actor keeps its thread while its mailbox
// holds messages). Under the default a worker whose mailbox always holds its
// next message keeps its thread, and a job queued behind it (a ring hop of
// a shadow syncer, a foreground round's reply) waits: on 2 cores 4 trainers'
// S-MA syncers made 124-332 rounds on 100 000 rows where 1 gives 704-748,
// and FR-MA's workers were blocked 34-37 % of the time against 10 % with 1
// (docs/virtual-time.md, "The scheduler's turns").
void set_max_throughput(caf::actor_system_config& sys_cfg, std::size_t messages);

// Sets scheduler.policy (sharing when asked), scheduler.max-threads
// (scheduler_threads(c)), scheduler.max-throughput and the idle polling on
// `sys_cfg`.
void configure_wall_scheduler(caf::actor_system_config& sys_cfg, const train_config& c,
                              std::size_t hardware_cores);

// A node's scheduler: `threads` threads (launch gives each node cores /
// nodes). A node of one thread has no other thread to steal from, and the
// work it waits for comes from the middleman's and the clock's threads,
// whose enqueue wakes a sleeping thread at once; CAF's 500 polls 50 us
// apart would only delay each remote message by up to 50 us. So with one
// thread it skips them (work-stealing.moderate-poll-attempts = 0) and
// sleeps after CAF's 100 quick polls. With more threads CAF's defaults stay
// (the polls are how its threads find each other's work).
//
// A node of one thread also decodes remote messages in the middleman's
// thread (middleman.workers = 0). CAF 0.17.6's default, 1 BASP worker on
// up to 7 cores (libcaf_io basp/worker.cpp), copies each message's payload
// and decodes it as a job on the scheduler: on a node of one thread that
// job waits behind, and then takes time from, the node's only compute
// thread. The message it delivers also goes to the front of that thread's
// queue (an enqueue from a scheduler thread prepends, one from the
// middleman appends), so a trainer node's syncer, whose replies are large,
// ran rounds ahead of its worker's batches: 3x the one process's rounds,
// their CPU taken from training on shared cores (docs/RESULTS.md 6). With
// more threads CAF's default stays: its BASP workers decode in parallel
// with the middleman's thread.
// max_throughput: scheduler.max-throughput, as set_max_throughput.
void configure_node_scheduler(caf::actor_system_config& sys_cfg, std::size_t threads,
                              std::size_t max_throughput = 0);

} // namespace runtime
