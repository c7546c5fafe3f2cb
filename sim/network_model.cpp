#include "sim/network_model.hpp"

#include <algorithm>

namespace runtime {

network_model::network_model(std::size_t hosts, settings s)
  : settings_(s), tx_free_(hosts), rx_free_(hosts), tx_busy_(hosts, 0.0), rx_busy_(hosts, 0.0) {}

double network_model::factor_at(std::size_t host, time_point t) const {
  double f = 1;
  for (const auto& w : slow_)
    if (w.host == host && w.from <= t && t < w.until)
      f *= w.factor;
  return f;
}

std::chrono::nanoseconds network_model::transfer(std::size_t from, std::size_t to,
                                                 std::uint64_t bytes, time_point now) {
  if (from == to)
    return std::chrono::nanoseconds{0};
  std::lock_guard<std::mutex> guard(mtx_);
  count_locked(bytes);
  return reserve_locked(from, to, bytes, now);
}

void network_model::count(std::uint64_t bytes) {
  std::lock_guard<std::mutex> guard(mtx_);
  count_locked(bytes);
}

void network_model::count_locked(std::uint64_t bytes) {
  bytes_ += bytes;
  ++messages_;
}

std::chrono::nanoseconds network_model::reserve(std::size_t from, std::size_t to,
                                                std::uint64_t bytes, time_point now) {
  if (from == to)
    return std::chrono::nanoseconds{0};
  std::lock_guard<std::mutex> guard(mtx_);
  return reserve_locked(from, to, bytes, now);
}

std::chrono::nanoseconds network_model::reserve_locked(std::size_t from, std::size_t to,
                                                       std::uint64_t bytes, time_point now) {
  using dur = std::chrono::duration<double, std::nano>;
  const double dil = std::max(1.0, settings_.dilation);
  // bits / (Gbit/s) = ns
  const double bits = double(bytes) * 8.0;
  const auto ns = [](double x) { return std::chrono::duration_cast<clock_type::duration>(dur(x)); };
  const auto latency = ns(settings_.latency_us * 1e3 * dil);
  const auto tx_start = std::max(now, tx_free_[from]);
  const auto wire_tx = ns(bits / (settings_.bandwidth_gbps * factor_at(from, tx_start)) * dil);
  const auto tx_end = tx_start + wire_tx;
  tx_free_[from] = tx_end;
  // The first bit reaches the receiver one latency after it left; the
  // receiver's NIC takes the bytes in at its own rate after the ones ahead.
  const auto first_bit = tx_start + latency;
  const auto rx_start = std::max(first_bit, rx_free_[to]);
  const auto wire_rx = ns(bits / (settings_.bandwidth_gbps * factor_at(to, rx_start)) * dil);
  const auto rx_end = std::max(tx_end + latency, rx_start + wire_rx);
  rx_free_[to] = rx_end;
  tx_busy_[from] += std::chrono::duration<double>(wire_tx).count();
  rx_busy_[to] += std::chrono::duration<double>(wire_rx).count();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(rx_end - now);
}

void network_model::slow(std::size_t host, time_point from, time_point until, double factor) {
  std::lock_guard<std::mutex> guard(mtx_);
  slow_.push_back({host, from, until, factor});
}

std::uint64_t network_model::bytes_moved() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return bytes_;
}

std::uint64_t network_model::messages_moved() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return messages_;
}

std::vector<double> network_model::tx_busy_seconds() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return tx_busy_;
}

std::vector<double> network_model::rx_busy_seconds() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return rx_busy_;
}

} // namespace runtime
