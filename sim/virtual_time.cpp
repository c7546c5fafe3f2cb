// The discrete-event loop of the virtual-time cluster (see virtual_time.hpp).
#include "sim/virtual_time.hpp"
#include "sim/work_costs.hpp"

#include "actors/cpu_time.hpp"
#include "data/hashing.hpp"
#include "messages/wire_size.hpp"

#include <algorithm>
#include <cmath>

#include <caf/abstract_actor.hpp>
#include <caf/local_actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/detail/test_actor_clock.hpp>
#include <caf/scheduler/test_coordinator.hpp>

namespace runtime {

namespace {

// u in [-1, 1) from (seed, n): splitmix64, so a run's draws depend only on
// its seed and the order of its handlers.
double jitter_draw(std::uint64_t seed, std::uint64_t n) {
  const auto z = data::splitmix64_finalize(seed + 0x9e3779b97f4a7c15ULL * (n + 1));
  return double(z >> 11) * 0x1.0p-52 - 1.0;
}

virtual_engine::duration to_duration(double seconds) {
  return std::chrono::duration_cast<virtual_engine::duration>(
    std::chrono::nanoseconds(std::llround(seconds * 1e9)));
}

} // namespace

bool virtual_engine::intercept(caf::abstract_actor* receiver, caf::mailbox_element_ptr& what) {
  if (delivering_ || !in_handler_)
    return false; // due now
  held_message m;
  m.receiver = caf::strong_actor_ptr{receiver->ctrl()};
  m.what = std::move(what);
  m.origin = running_on_;
  if (cfg_.send_at_work) {
    m.work_at = cfg_.measured ? actors::thread_cpu_seconds() - cpu0_
                              : cfg_.message_us * 1e-6 + charged_s_;
    m.device_at = device_s_;
  }
  outbox_.push_back(std::move(m));
  return true;
}

void virtual_engine::charge(double flops, double bytes) {
  flops_s_ += flops / (cfg_.gflops * 1e9) * slowdown_;
  charge_seconds_of_work(flops / (cfg_.gflops * 1e9) + bytes / (cfg_.memory_gbps * 1e9));
}

void virtual_engine::charge_seconds_of_work(double seconds) {
  charged_s_ += seconds * slowdown_;
  if (in_handler_ && !cfg_.measured) // the handler reads the clock after its work so far
    sched_->clock().current_time = handler_start_ + to_duration(charged_s_ + device_s_);
}

double virtual_engine::contention_at(const std::vector<time_point>& cs, std::size_t core,
                                     time_point t) const {
  if (cfg_.core_contention == 1.0 || cs.size() < 2)
    return 1.0;
  std::size_t busy = 0;
  for (std::size_t j = 0; j < cs.size(); ++j)
    busy += j != core && cs[j] > t;
  return 1.0 + (cfg_.core_contention - 1.0) * double(busy) / double(cs.size() - 1);
}

double virtual_engine::remote_seconds(std::size_t bytes, bool awake) const {
  double us = cfg_.remote_tls ? cfg_.remote_tls_message_us : cfg_.remote_message_us;
  if (awake && remote_streamed())
    us = cfg_.remote_tls ? cfg_.remote_tls_streamed_message_us : cfg_.remote_streamed_message_us;
  const double gbps = cfg_.remote_tls ? cfg_.remote_tls_gbps : cfg_.remote_gbps;
  double s = us * 1e-6;
  if (gbps > 0)
    s += double(bytes) / (gbps * 1e9);
  return s;
}

void virtual_engine::count(actors::work kind, double items, double width, double more) {
  const auto c = cost_of(kind, items, width, more, cfg_);
  if (c.timed)
    charge_seconds_of_work(c.seconds);
  else
    charge(c.flops, c.bytes);
}

std::optional<double> virtual_engine::store_seconds(double bytes, double gbps) {
  const double s = bytes / (gbps * 1e9);
  charge_seconds(s);
  return s;
}

void virtual_engine::charge_seconds(double seconds) {
  device_s_ += seconds;
  if (in_handler_) // the handler reads the clock after the wait
    sched_->clock().current_time += to_duration(seconds);
}

namespace {

// A role's name without its indices ("worker-0-1" -> "worker", "trainer-3"
// -> "trainer"): the actor's name, less each trailing "-<digits>".
std::string role_name(caf::abstract_actor* a) {
  auto* l = dynamic_cast<caf::local_actor*>(a);
  std::string n = l ? l->name() : "?";
  for (;;) {
    const auto dash = n.find_last_of('-');
    if (dash == std::string::npos || dash + 1 == n.size() ||
        n.find_first_not_of("0123456789", dash + 1) != std::string::npos)
      return n;
    n.resize(dash);
  }
}

} // namespace

void virtual_engine::absorb(const origin_type& origin) {
  while (!sched_->jobs.empty()) {
    auto* job = sched_->jobs.front();
    sched_->jobs.pop_front();
    auto* actor = dynamic_cast<caf::abstract_actor*>(job);
    auto i = actor ? actors_.find(actor->id()) : actors_.end();
    if (i == actors_.end() || !i->second.host) {
      free_jobs_.push_back(job);
      continue;
    }
    auto& a = i->second;
    if (a.in_turn && a.busy_until >= now()) { // its handler runs: its mailbox holds more
      a.pending = job;
      ends_.emplace(a.busy_until, actor->id()); // its turn goes on, or not, at its end
      continue;
    }
    a.in_turn = false; // (its turn ended with its last handler)
    if (origin && origin->first == *a.host)
      queues_.push_internal(*a.host, origin->second, job);
    else
      queues_.push_external(*a.host, job);
  }
}

void virtual_engine::end_turns() {
  const auto t = now();
  while (!ends_.empty() && ends_.begin()->first <= t) {
    const auto id = ends_.begin()->second;
    ends_.erase(ends_.begin());
    auto i = actors_.find(id);
    if (i == actors_.end() || !i->second.pending)
      continue;
    auto& a = i->second;
    auto* job = a.pending;
    a.pending = nullptr;
    if (cfg_.max_throughput == 0 || a.handled < cfg_.max_throughput) {
      a.continuing = true;
      queues_.continue_on(*a.host, a.core, job);
    } else { // the turn's budget is spent: the back of its core's queue
      a.in_turn = false;
      queues_.push_later(*a.host, a.core, job);
    }
  }
}

bool virtual_engine::run_next() {
  if (!free_jobs_.empty()) {
    auto* job = free_jobs_.front();
    free_jobs_.pop_front();
    run_job(job, std::nullopt, 0);
    return true;
  }
  const auto t = now();
  if (!machine_.empty() && *std::min_element(machine_.begin(), machine_.end()) > t)
    return false; // every core of the machine is busy
  const auto& hosts = queues_.hosts_with_work();
  if (hosts.empty())
    return false;
  // Turns that go on first, then the queues: a thread that keeps its actor
  // runs the next message at once, where another thread takes a queued job
  // (or steals it) only when it looks. On a shared machine the hosts take a
  // free core in turn (the OS's threads); on their own, in order.
  for (const bool continuing : {true, false}) {
    auto first = machine_.empty() ? hosts.begin() : hosts.lower_bound(next_host_);
    for (std::size_t n = 0; n < hosts.size(); ++n, ++first) {
      if (first == hosts.end())
        first = hosts.begin();
      const auto h = *first;
      const auto& cs = cores_[h];
      for (std::size_t k = 0; k < cs.size(); ++k)
        if (cs[k] <= t && queues_.can_take(h, k, continuing)) {
          next_host_ = h + 1;
          run_job(queues_.take(h, k), h, k);
          return true;
        }
    }
  }
  return false;
}

std::optional<virtual_engine::time_point> virtual_engine::next_core_time() const {
  std::optional<time_point> out;
  for (const auto h : queues_.hosts_with_work()) {
    const auto& cs = cores_[h];
    for (std::size_t k = 0; k < cs.size(); ++k)
      if (queues_.can_take(h, k) && (!out || cs[k] < *out))
        out = cs[k];
  }
  if (out && !machine_.empty())
    out = std::max(*out, *std::min_element(machine_.begin(), machine_.end()));
  return out;
}

void virtual_engine::run_job(caf::resumable* job, std::optional<std::size_t> host,
                             std::size_t core) {
  const auto t = now();
  auto* actor = dynamic_cast<caf::abstract_actor*>(job);
  const caf::actor_id id = actor ? actor->id() : 0;
  role_totals* role = nullptr; // (a map's node: stays where it is)
  actor_info* info = nullptr;
  if (host) {
    info = &actors_.at(id);
    if (!info->role) // named before its handler: the handler may end the actor
      info->role = &stats_.by_role[role_name(actor)];
    role = info->role;
    auto& owner = turn_owners_[*host][core]; // the turn it takes the core from is over
    if (owner != id) {
      if (auto prev = actors_.find(owner); prev != actors_.end() && prev->second.core == core)
        prev->second.in_turn = false;
      owner = id;
    }
    if (!info->continuing) // a new turn
      info->handled = 0;
    info->continuing = false;
    info->in_turn = true;
    info->core = core;
    ++info->handled;
  }
  std::size_t mcore = 0; // the machine's core (sim.machine-cores)
  // The core its work runs on: the machine's (sim.machine-cores), else the host's.
  std::vector<time_point>* physical = nullptr;
  std::size_t pcore = core;
  if (host) {
    physical = &physical_cores(*host);
    if (!machine_.empty()) {
      mcore = std::size_t(std::min_element(machine_.begin(), machine_.end()) - machine_.begin());
      pcore = mcore;
    }
  }
  sched_->jobs.push_front(job);
  running_on_ = host ? origin_type{{*host, core}} : std::nullopt;
  in_handler_ = true;
  handler_start_ = t;
  charged_s_ = 0;
  device_s_ = 0;
  flops_s_ = 0;
  slowdown_ = physical ? contention_at(*physical, pcore, t) : 1.0;
  actors::current_fabric() = this;
  cpu0_ = cfg_.measured ? actors::thread_cpu_seconds() : 0.0;
  sched_->try_run_once(); // the job may be gone after this
  const double cpu = cfg_.measured ? actors::thread_cpu_seconds() - cpu0_ : 0.0;
  actors::current_fabric() = nullptr;
  in_handler_ = false;
  sched_->clock().current_time = t; // back to the handler's start: others run from here
  const double price = cfg_.message_us * 1e-6 + charged_s_; // the model's, of its work
  double cost = 0;
  if (host) {
    cost = cfg_.measured ? cpu * slowdown_ : price;
    if (cfg_.jitter > 0)
      cost *= 1.0 + cfg_.jitter * jitter_draw(cfg_.seed, stats_.handlers);
    cost += device_s_; // the handler waited for a device (the checkpoint store) on its core
    add_busy(*host, cost);
  }
  const auto end = t + to_duration(cost);
  if (host) {
    cores_[*host][core] = end;
    if (!machine_.empty())
      machine_[mcore] = end;
    if (auto i = actors_.find(id); i != actors_.end()) // (the handler may have ended it)
      i->second.busy_until = end;
    if (role) {
      role->seconds += cost;
      ++role->handlers;
      if (cfg_.measured) { // the model's price of the same handler, beside the CPU's
        role->model_seconds += price;
        role->flops_seconds += flops_s_;
        if (charged_s_ > 0) { // its spread around the price
          const double r = (cost - device_s_) / price;
          role->ratio_weight += price;
          role->ratio_sum += price * r;
          role->ratio_sq_sum += price * r * r;
        }
        if (charged_s_ == 0) {
          ++role->bare_handlers;
          role->bare_seconds += cost - device_s_;
        }
      }
    }
  }
  // Messages to other hosts: each is serialised on the sender's core after
  // the handler, one after the other, then pays the network. (Neither
  // priced: they arrive at the handler's end, as on one host.)
  const bool priced = net_ || remote_seconds(0) > 0 ||
                      (cfg_.remote_tls ? cfg_.remote_tls_gbps : cfg_.remote_gbps) > 0;
  auto depart = end;
  // sim.send-at=work: the handler's core time (less its device waits) per
  // unit of the work a send's work_at counts.
  const double work = cfg_.measured ? cpu : price;
  const double scale = work > 0 ? (cost - device_s_) / work : 0.0;
  for (auto& m : outbox_) {
    auto arrival = end;
    const auto to = host ? host_of(m.receiver->id()) : std::nullopt;
    if (cfg_.send_at_work && to && *to == *host)
      arrival = std::min(end, t + to_duration(m.work_at * scale + m.device_at));
    if (host && priced)
      if (to && *to != *host) {
        const auto bytes = messages::wire_bytes(m.what->content());
        if (const double d = remote_seconds(bytes); d > 0) {
          auto& lane = tx_free_[*host];
          const double ds = remote_streamed() ? remote_seconds(bytes, lane >= depart) : d;
          depart = std::max(depart, lane) + to_duration(ds);
          lane = depart;
          add_busy(*host, ds);
          if (!remote_streamed()) // else counted on arrival, at the price paid there
            add_busy(*to, d); // its receiving side, counted with it (as the network counts it)
          m.recv_seconds = d;
          m.recv_bytes = bytes;
          m.to_host = *to;
        }
        arrival = depart;
        if (net_) { // sent now; the network takes it when it leaves (advance_to)
          net_->count(bytes);
          m.from_host = *host;
          m.to_host = *to;
          m.bytes = bytes;
          departing_.emplace(depart, std::move(m));
          continue;
        }
      }
    in_flight_.emplace(arrival, std::move(m));
  }
  outbox_.clear();
  if (depart > end)
    (*physical)[pcore] = depart;
  ++stats_.handlers;
  absorb(running_on_); // its own job, when its mailbox holds more; actors it spawned
  running_on_.reset();
}

std::optional<virtual_engine::time_point> virtual_engine::next_event() const {
  std::optional<time_point> t;
  auto consider = [&](time_point x) { t = t ? std::min(*t, x) : x; };
  if (!in_flight_.empty())
    consider(in_flight_.begin()->first);
  if (!departing_.empty())
    consider(departing_.begin()->first);
  if (!ends_.empty())
    consider(ends_.begin()->first);
  if (const auto c = next_core_time())
    consider(*c);
  if (!events_.empty())
    consider(events_.begin()->first);
  const auto& timers = sched_->clock().schedule();
  if (!timers.empty())
    consider(timers.begin()->first);
  return t;
}

void virtual_engine::advance_to(time_point t) {
  const auto n = now();
  // Fires the timers due by then. (Not trigger_timeouts(): in CAF 0.17 it
  // fires every pending timer whatever its time, and moves the clock to the
  // latest, e.g. a request's timeout 30 s on.)
  sched_->clock().advance_time(t > n ? t - n : caf::actor_clock::duration_type{0});
  absorb(std::nullopt); // made ready by a timer: from outside the hosts' threads
  // Departures first, in the order they leave: a NIC queues a message
  // behind those that left before it, not behind those whose handlers ran
  // before (a long handler's messages leave at its end, later).
  while (!departing_.empty() && departing_.begin()->first <= t) {
    auto node = departing_.extract(departing_.begin());
    auto& m = node.mapped();
    const auto arrival = node.key() + net_->reserve(m.from_host, m.to_host, m.bytes, node.key());
    in_flight_.emplace(arrival, std::move(m));
  }
  delivering_ = true;
  while (!in_flight_.empty() && in_flight_.begin()->first <= t) {
    auto node = in_flight_.extract(in_flight_.begin());
    auto& m = node.mapped();
    if (m.recv_seconds > 0) { // its receiving host's core reads it first
      // (The earliest free core, held from now when the lane is busy: it
      // may sit idle until the lane frees, a small overcharge of its time.)
      auto& cs = physical_cores(m.to_host);
      auto c = std::min_element(cs.begin(), cs.end());
      auto& lane = rx_free_[m.to_host];
      if (remote_streamed()) {
        m.recv_seconds = remote_seconds(m.recv_bytes, lane >= t);
        add_busy(m.to_host, m.recv_seconds);
      }
      *c = std::max({t, *c, lane}) + to_duration(m.recv_seconds);
      lane = *c;
      m.recv_seconds = 0;
      node.key() = *c;
      in_flight_.insert(std::move(node));
      continue;
    }
    if (auto* a = caf::actor_cast<caf::abstract_actor*>(m.receiver)) {
      a->enqueue(std::move(m.what), nullptr);
      absorb(m.origin);
    }
  }
  delivering_ = false;
  while (!events_.empty() && events_.begin()->first <= t) {
    auto f = std::move(events_.begin()->second);
    events_.erase(events_.begin());
    f();
  }
  absorb(std::nullopt);
}

bool virtual_engine::step() {
  absorb(std::nullopt); // sent from outside any handler (the coordinator, a spawn)
  end_turns();
  if (run_next())
    return true;
  const auto t = next_event();
  if (!t)
    return false;
  advance_to(std::max(*t, now()));
  return true;
}

bool virtual_engine::run_until(const std::function<bool()>& pred) {
  while (!pred())
    if (!step())
      return pred();
  return true;
}

} // namespace runtime
