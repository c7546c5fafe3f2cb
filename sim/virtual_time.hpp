#pragma once
// The discrete-event loop of the virtual-time cluster (sim.clock=virtual;
// DESIGN.md section 10). Every actor runs on CAF's deterministic scheduler
// (scheduler.policy=testing) on the calling thread, one message at a time;
// the engine decides when, in virtual time, each one runs:
//
// - Hosts and cores. A role spawned with actors::spawn_role() is placed on
//   a host with `cores_per_host` cores (its scheduler's threads). Its
//   handler starts when its message has arrived, the role's previous
//   handler has ended (an actor is sequential) and its turn comes on one of
//   its host's cores; it holds that core from start to start + cost.
// - Turns, as CAF's scheduler takes them (scheduler.policy,
//   scheduler.max-throughput; the queues: sim/run_queues.hpp). An actor
//   made ready by a message joins a core's queue: with work stealing the
//   front of its sender's core's when the sender ran on the same host,
//   else the back of a core's in turn. When a handler ends and its actor's
//   mailbox holds more (messages that arrived while it ran), the actor
//   keeps its core and runs the next one, up to max_throughput messages a
//   turn (0: while any are left), then joins the back of its core's queue.
// - Costs. `model` (deterministic): message_us per handler, plus the work
//   the handler counted (actors::count), priced by sim/work_costs.hpp:
//   flops / gflops + bytes / memory_gbps, and an embedding shard's rows at
//   lookup_row_ns / push_row_ns each where calibrated. `measured`: the handler's thread CPU
//   time. Either x the contention factor (core_contention) when other cores
//   of its host are busy at its start: handlers run here one at a time, so
//   neither mode sees cores slowing each other (a shared replica's cache
//   lines, shared caches and memory).
// - Inside a handler the actor clock reads its start plus the work charged
//   so far (cost model), so waits measured by the roles start after the
//   work that precedes them.
// - Machines. With machine_cores > 0 every host runs on one machine of that
//   many cores: a handler also needs a free core of the machine (hosts are
//   then processes, their cores_per_host their scheduler threads).
// - Messages a handler sends to a role leave at the handler's end (start +
//   cost); with sim.send-at=work one to a role of its own host leaves once
//   the work the handler counted before the send is done (that work's share
//   of the handler's cost), so another core may take the receiver while the
//   sender still runs, as a real thread steals a job its peer just queued.
//   A message to another host first costs its sender's core
//   remote_message_us + bytes / remote_gbps (serialisation, the socket; with
//   remote_tls the TLS pair, remote_tls_message_us and remote_tls_gbps), one
//   message after the other, and on arrival as much on a core of the
//   receiving host (of the machine, with machine_cores) before it is
//   delivered; both 0 (the default): free. With remote_streamed_message_us
//   (remote_tls_streamed_message_us) a side whose I/O lane is still busy
//   with the message before, or frees just as this one comes, pays that
//   instead of the per-message term: its I/O thread is awake, and the
//   wake-ups and idle polling of a lone message are not paid again. Each host sends, and receives,
//   one such message at a time in order (a node's I/O thread), so messages
//   between two roles keep their order. Between two hosts they also pay the
//   network model (set_network; sim/network_model.hpp), after the
//   sender's side, which queues them on both NICs in the order they leave
//   (the engine hands each to it at its departure, not when its handler
//   runs: a long handler's messages leave at its end, after those of
//   shorter handlers that ran later); on one host,
//   or without a network model, they arrive at the handler's end. Messages
//   from outside any handler (the coordinator, the clock's timers) arrive at
//   once.
// - A frozen host (faults.freeze) starts no handler until the freeze ends;
//   its messages wait in its mailboxes.
// - The loop: end the turns whose handlers have ended, run a job of a role
//   on no host (the coordinator's helpers: free, at once), else the next job
//   of a free core (hosts and cores in order; on a shared machine the hosts
//   take the free core in turn), and when none is left, advance the actor
//   clock (caf::detail::test_actor_clock) to the next event: a held
//   message's arrival, a handler's end, a core freed for a waiting job, or a
//   timer. Ties keep their order, so a run is a function of its inputs: the
//   same command gives the same events, the same virtual times and the same
//   results.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/fwd.hpp>
#include <caf/mailbox_element.hpp>

#include "actors/sim_host.hpp"
#include "sim/network_model.hpp"
#include "sim/run_queues.hpp"
#include "config/sim_config.hpp"
#include "report/run_metrics.hpp"

namespace caf::scheduler {
class test_coordinator;
}

namespace runtime {

class virtual_engine final : public actors::host_fabric {
public:
  using time_point = caf::actor_clock::time_point;
  using duration = caf::actor_clock::duration_type;

  explicit virtual_engine(virtual_settings s);
  // The system must run with scheduler.policy=testing and carry this engine
  // in its cluster_system_config.
  void attach(caf::actor_system& sys);

  bool intercept(caf::abstract_actor* receiver, caf::mailbox_element_ptr& what) override;
  void place(caf::actor_id id, std::size_t host) override;
  void count(actors::work kind, double items, double width, double more) override;
  std::optional<double> store_seconds(double bytes, double gbps) override;
  actors::execution how() const override { return {false, true, false}; }

  // The network between hosts (null: none); must outlive the engine's use.
  void set_network(network_model* net) { net_ = net; }
  // faults.freeze: `host` starts no handler before `until`. Precondition:
  // the host has a role placed on it.
  void freeze(std::size_t host, time_point until);

  // One event: runs a ready job, or advances the clock to the next event.
  // False when nothing is left to do.
  bool step();
  // Steps until pred() holds (true) or nothing is left (false).
  bool run_until(const std::function<bool()>& pred);
  // Runs `f` outside any handler when the clock reaches `t` (fault
  // injection); ties run in the order they were added.
  void at(time_point t, std::function<void()> f) { events_.emplace(t, std::move(f)); }
  // Steps until nothing is left.
  void run() {
    while (step()) {
    }
  }
  // Virtual time since the engine was attached.
  duration elapsed() const;
  time_point now() const;

  // One role's handlers: their count and the core time they were charged.
  // With sim.cost=measured also what the model would have charged the same
  // handlers (sim.message-us each plus their counted work), and the
  // handlers that counted no work ("bare": a reply taken, a message passed
  // on) apart, measured: where the model and the CPU part. (The metrics'
  // type: run_metrics.hpp.)
  using role_totals = sim_metrics::role_busy;
  struct totals {
    std::uint64_t handlers = 0;  // handlers run
    double busy_seconds = 0;     // core time charged, all hosts
    // By role (the actor's name less its indices: "worker-0-1" is
    // "worker"): its handlers' time, not a remote message's sides.
    std::map<std::string, role_totals> by_role;
  };
  const totals& stats() const { return stats_; }
  // Core seconds charged on each host so far.
  const std::vector<double>& host_busy() const { return host_busy_; }
  std::size_t cores_per_host() const { return cfg_.cores_per_host; }
  bool measured_costs() const { return cfg_.measured; }

private:
  // Work done by the handler running now (sim.cost=model).
  void charge(double flops, double bytes);
  // Time the handler running now spends waiting on a device other than its
  // core (the checkpoint store), in seconds.
  void charge_seconds(double seconds);
  // Core time of the handler running now (sim.cost=model), from its work.
  void charge_seconds_of_work(double seconds);
  // The running handler's slowdown on `core` of `host` at `t`, from the
  // host's other busy cores (virtual_settings::core_contention).
  double contention_at(const std::vector<time_point>& cores, std::size_t core,
                       time_point t) const;
  // The cores a host's work runs on: the machine's, or its own.
  std::vector<time_point>& physical_cores(std::size_t host) {
    return machine_.empty() ? cores_[host] : machine_;
  }
  // Core time of a message between two hosts, each side (0: free); awake:
  // the side's I/O thread is still busy with the message before (the
  // streamed cost, where calibrated).
  double remote_seconds(std::size_t bytes, bool awake = false) const;
  bool remote_streamed() const {
    return (cfg_.remote_tls ? cfg_.remote_tls_streamed_message_us
                            : cfg_.remote_streamed_message_us) > 0;
  }
  void add_busy(std::size_t host, double seconds) {
    host_busy_[host] += seconds;
    stats_.busy_seconds += seconds;
  }
  struct held_message {
    caf::strong_actor_ptr receiver;
    caf::mailbox_element_ptr what;
    double recv_seconds = 0; // core time its receiving host still owes it
    std::size_t recv_bytes = 0; // its wire bytes (the receiving side's price)
    std::size_t to_host = 0;
    // Waiting to depart into the network model: its hosts and wire bytes.
    std::size_t from_host = 0;
    std::size_t bytes = 0;
    // Where its sender ran (a handler's host and core; none: outside one).
    std::optional<std::pair<std::size_t, std::size_t>> origin;
    // sim.send-at=work: its handler's work before the send (the model's
    // price, or thread CPU seconds with sim.cost=measured) and device time.
    double work_at = 0;
    double device_at = 0;
  };
  struct actor_info {
    std::optional<std::size_t> host;
    time_point busy_until{};
    role_totals* role = nullptr; // in stats_.by_role, from its first handler
    // Its turn: whether its last handler may go on (until busy_until), the
    // core it holds, the messages handled, its job while a handler runs and
    // the mailbox holds more (decided at the handler's end: ends_), and
    // whether the next handler goes on the turn.
    bool in_turn = false;
    bool continuing = false;
    std::size_t core = 0;
    std::size_t handled = 0;
    caf::resumable* pending = nullptr;
  };
  using origin_type = std::optional<std::pair<std::size_t, std::size_t>>;
  // Moves the jobs CAF queued (sched_->jobs) to where they wait: the
  // running turn of their actor, the queues of its host (made ready from
  // `origin`), or the free list of a role on no host.
  void absorb(const origin_type& origin);
  // Decides the turns of the pending jobs whose handlers have ended by now:
  // continued on their core, or queued at its back (the turn's budget spent).
  void end_turns();
  // Runs the next job that can run now; false when none.
  bool run_next();
  void run_job(caf::resumable* job, std::optional<std::size_t> host, std::size_t core);
  // The earliest time a free core meets a waiting job, if any waits.
  std::optional<time_point> next_core_time() const;
  std::optional<time_point> next_event() const;
  // The host a role was placed on, if any.
  std::optional<std::size_t> host_of(caf::actor_id id) const;
  void advance_to(time_point t);

  virtual_settings cfg_;
  network_model* net_ = nullptr;
  caf::scheduler::test_coordinator* sched_ = nullptr;
  time_point start_{};
  std::unordered_map<caf::actor_id, actor_info> actors_;
  std::vector<std::vector<time_point>> cores_; // per host: when each core is free
  std::vector<time_point> machine_;             // machine_cores: when each is free
  std::vector<std::vector<caf::actor_id>> turn_owners_; // per host and core: its last actor
  // Per host: when its I/O lanes are free (sim.remote-*).
  std::unordered_map<std::size_t, time_point> tx_free_, rx_free_;
  std::vector<double> host_busy_;
  std::multimap<time_point, held_message> in_flight_; // by arrival
  // Messages for the network model, by departure: each NIC takes them in
  // the order they leave, whenever their handlers ran.
  std::multimap<time_point, held_message> departing_;
  run_queues queues_;                       // jobs waiting for a core, per host
  std::deque<caf::resumable*> free_jobs_;   // jobs of roles on no host
  std::multimap<time_point, caf::actor_id> ends_; // ends of handlers with a pending job
  std::size_t next_host_ = 0; // sim.machine-cores: the host whose turn it is
  std::multimap<time_point, std::function<void()>> events_; // at()
  // The handler running now.
  bool in_handler_ = false, delivering_ = false;
  origin_type running_on_; // its host and core
  time_point handler_start_{};
  double charged_s_ = 0;
  double device_s_ = 0; // charge_seconds() of the running handler
  double flops_s_ = 0;  // the part of charged_s_ priced at gflops
  double slowdown_ = 1;  // its contention factor
  double cpu0_ = 0;      // sim.cost=measured: its thread's CPU seconds at its start
  std::vector<held_message> outbox_;
  totals stats_;
};

// True when `sys` runs on a virtual engine (for the cluster's reports; a
// role asks actors::execution_of() what it needs to know).
bool virtual_clock(caf::actor_system& sys);
// The engine `sys` runs on, or null (read-only: the timeline's per-host busy
// core seconds).
const virtual_engine* virtual_engine_of(caf::actor_system& sys);

} // namespace runtime
