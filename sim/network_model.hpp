#pragma once
// The network of the simulated cluster (cluster.mode=simulated with
// net.enabled; DESIGN.md section 6): what a message between two simulated
// hosts costs. The transports (wall_transport.hpp under the wall clock, the
// virtual engine under the virtual clock) ask it for every message a role
// sends to a role on another host; the roles themselves know nothing of it.
//
// Every host has one NIC (latency, bandwidth). A message of B bytes from host
// a to host b sent at time t:
//   leaves a's NIC after queueing behind a's earlier transmissions and B/bw,
//   crosses the wire (latency),
//   enters b's NIC after queueing behind b's earlier receptions and B/bw.
// transfer() returns the delay until delivery. Messages within one host cost
// nothing. A hot host (one dense shard serving many trainers) therefore sees
// its receive queue grow, and everyone talking to it waits longer. Per link
// the arrivals never overtake each other, so CAF's per-sender FIFO order
// holds through the network.
//
// Slow NICs (faults.slow-nic): between `from` and `until` a host's NIC runs
// at `factor` x its bandwidth, in both directions.
//
// Time dilation (wall clock only): when more actors are busy than there are
// cores, compute runs slower than on real hosts by that factor. Multiplying
// every network delay by the same factor keeps each host's compute-to-network
// ratio as it would be on real machines (DieCast, NSDI'08); simulated time
// then runs `dilation` times slower than wall time. The virtual clock needs
// none (dilation 1).
//
// Thread safety: every member may be called concurrently (one mutex; calls
// are short). Time points are the actor clock's: steady_clock under the
// wall clock, the virtual clock's own under sim.clock=virtual.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace runtime {

// Where each role of the simulated cluster lives (DESIGN.md section 6):
// trainer t (its workers, syncer and reader) on host t, embedding shard s on
// host N + s, dense shard d on host N + E + d (N trainers, E embedding shards).
// With one_host (sim.placement=one-host) every role lives on host 0, as on
// one real machine; the other hosts run nothing.
struct placement {
  std::size_t trainers = 1, embedding_shards = 1, dense_shards = 1;
  bool one_host = false;

  std::size_t hosts() const { return trainers + embedding_shards + dense_shards; }
  std::size_t host_of_trainer(std::size_t t) const { return one_host ? 0 : t; }
  std::size_t host_of_embedding(std::size_t s) const { return one_host ? 0 : trainers + s; }
  std::size_t host_of_dense(std::size_t d) const {
    return one_host ? 0 : trainers + embedding_shards + d;
  }
};

class network_model {
public:
  using clock_type = std::chrono::steady_clock;
  using time_point = clock_type::time_point;

  struct settings {
    double latency_us = 20;       // one-way wire latency
    double bandwidth_gbps = 25;   // per NIC and direction
    double dilation = 1;          // >= 1, see above
  };

  network_model(std::size_t hosts, settings s);

  // Reserves the path for `bytes` from host `from` to host `to` at time `now`
  // and returns the delay until the message is delivered (zero on one host).
  // Precondition: from, to < hosts().
  std::chrono::nanoseconds transfer(std::size_t from, std::size_t to, std::uint64_t bytes,
                                    time_point now);
  // transfer() in two parts, for a sender that knows a message before it
  // leaves (the virtual engine: when its handler runs, and it leaves at the
  // handler's end): count() it among the bytes and messages moved then, and
  // reserve() its path when it leaves. Calls to reserve() must come in the
  // order the messages leave: a NIC serves them in that order.
  void count(std::uint64_t bytes);
  std::chrono::nanoseconds reserve(std::size_t from, std::size_t to, std::uint64_t bytes,
                                   time_point now);

  // faults.slow-nic: host's NIC at factor x bandwidth in [from, until).
  // Precondition: host < hosts(), factor > 0.
  void slow(std::size_t host, time_point from, time_point until, double factor);

  const settings& config() const { return settings_; }
  std::size_t hosts() const { return tx_free_.size(); }

  // Bytes that crossed between distinct hosts.
  std::uint64_t bytes_moved() const;
  std::uint64_t messages_moved() const;
  // Seconds each host's NIC spent sending / receiving (utilisation = these
  // over the run's time).
  std::vector<double> tx_busy_seconds() const;
  std::vector<double> rx_busy_seconds() const;

private:
  struct slow_window {
    std::size_t host;
    time_point from, until;
    double factor;
  };
  double factor_at(std::size_t host, time_point t) const; // under mtx_
  // count()'s and reserve()'s work, under mtx_ (transfer() takes the lock
  // once for both parts).
  void count_locked(std::uint64_t bytes);
  std::chrono::nanoseconds reserve_locked(std::size_t from, std::size_t to, std::uint64_t bytes,
                                          time_point now);

  settings settings_;
  mutable std::mutex mtx_;
  std::vector<time_point> tx_free_, rx_free_;
  std::vector<double> tx_busy_, rx_busy_;
  std::vector<slow_window> slow_;
  std::uint64_t bytes_ = 0, messages_ = 0;
};

} // namespace runtime
