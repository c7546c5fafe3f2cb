#include "actors/sim_network.hpp"

#include <algorithm>

namespace actors {

sim_network::sim_network(std::size_t hosts, settings s)
  : settings_(s), tx_free_(hosts), rx_free_(hosts) {}

std::chrono::microseconds sim_network::transfer(std::size_t from, std::size_t to,
                                                std::uint64_t bytes, clock_type::time_point now) {
  if (from == to)
    return std::chrono::microseconds{0};
  using dur = std::chrono::duration<double, std::micro>;
  const double f = std::max(1.0, settings_.dilation);
  // bits / (Gbit/s) = ns; / 1000 = us
  const dur wire(double(bytes) * 8.0 / settings_.bandwidth_gbps / 1000.0 * f);
  const dur latency(settings_.latency_us * f);
  std::lock_guard<std::mutex> guard(mtx_);
  auto tx_start = std::max(now, tx_free_[from]);
  auto tx_end = tx_start + std::chrono::duration_cast<clock_type::duration>(wire);
  tx_free_[from] = tx_end;
  auto arrival = tx_end + std::chrono::duration_cast<clock_type::duration>(latency);
  // The receiver's NIC takes the bytes in at line rate after the ones ahead.
  auto rx_start = std::max(arrival - std::chrono::duration_cast<clock_type::duration>(wire),
                           rx_free_[to]);
  auto rx_end = std::max(arrival, rx_start + std::chrono::duration_cast<clock_type::duration>(wire));
  rx_free_[to] = rx_end;
  bytes_ += bytes;
  return std::chrono::duration_cast<std::chrono::microseconds>(rx_end - now);
}

std::uint64_t sim_network::bytes_moved() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return bytes_;
}

} // namespace actors
