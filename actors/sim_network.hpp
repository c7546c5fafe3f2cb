#pragma once
// The simulated network of cluster.mode=simulated (DESIGN.md section 6).
//
// Every role is placed on a simulated host with one NIC (latency, bandwidth).
// A message of B bytes from host a to host b sent at time t:
//   leaves a's NIC after queueing behind a's earlier transmissions and B/bw,
//   crosses the wire (latency),
//   enters b's NIC after queueing behind b's earlier receptions and B/bw.
// The sender gets back the delay until delivery; senders turn it into a
// delayed_send or hold a reply until then. Messages within one host cost
// nothing. A hot host (one dense shard serving many trainers) therefore sees
// its receive queue grow, and everyone talking to it waits longer.
//
// Time dilation: when more actors are busy than there are cores, compute runs
// slower than on real hosts by that factor. Multiplying every network delay
// by the same factor keeps each host's compute-to-network ratio as it would
// be on real machines (DieCast, NSDI'08); simulated time then runs `dilation`
// times slower than wall time, so simulated throughput = wall throughput x
// dilation.
//
// Thread safety: all members may be called concurrently (one mutex; calls
// are short). Shared by every actor of one simulated cluster.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace actors {

// Where each role of the simulated cluster lives (DESIGN.md section 6):
// trainer t (its workers, syncer and reader) on host t, embedding shard s on
// host N + s, dense shard d on host N + E + d (N trainers, E embedding shards).
struct placement {
  std::size_t trainers = 1, embedding_shards = 1, dense_shards = 1;

  std::size_t hosts() const { return trainers + embedding_shards + dense_shards; }
  std::size_t host_of_trainer(std::size_t t) const { return t; }
  std::size_t host_of_embedding(std::size_t s) const { return trainers + s; }
  std::size_t host_of_dense(std::size_t d) const { return trainers + embedding_shards + d; }
};

class sim_network {
public:
  using clock_type = std::chrono::steady_clock;

  struct settings {
    double latency_us = 20;       // one-way wire latency
    double bandwidth_gbps = 25;   // per NIC and direction
    double dilation = 1;          // >= 1, see above
  };

  sim_network(std::size_t hosts, settings s);

  // Reserves the path for `bytes` from host `from` to host `to` at time `now`
  // and returns the delay until the message is delivered (zero on one host).
  std::chrono::microseconds transfer(std::size_t from, std::size_t to, std::uint64_t bytes,
                                     clock_type::time_point now = clock_type::now());

  const settings& config() const { return settings_; }
  std::size_t hosts() const { return tx_free_.size(); }

  // Bytes that crossed between distinct hosts.
  std::uint64_t bytes_moved() const;

private:
  settings settings_;
  mutable std::mutex mtx_;
  std::vector<clock_type::time_point> tx_free_, rx_free_;
  std::uint64_t bytes_ = 0;
};

} // namespace actors
