// The simulated network's delays (sim/network_model.hpp) against
// hand-computed values.
#include <doctest/doctest.h>

#include "sim/network_model.hpp"

using namespace std::chrono;
using runtime::network_model;

namespace {
long long us(nanoseconds d) { return duration_cast<microseconds>(d).count(); }
} // namespace

TEST_CASE("network model: one message is latency + bytes / bandwidth; one host is free") {
  // 10 Gbit/s, 5 us: 12,500 bytes = 100,000 bits take 10 us on the wire.
  network_model net(2, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  CHECK(net.transfer(0, 0, 1'000'000, t0).count() == 0);
  CHECK(us(net.transfer(0, 1, 12'500, t0)) == 15); // 10 us wire + 5 us latency
  CHECK(net.bytes_moved() == 12'500);
  CHECK(net.messages_moved() == 1);
  CHECK(net.tx_busy_seconds()[0] == doctest::Approx(10e-6));
  CHECK(net.rx_busy_seconds()[1] == doctest::Approx(10e-6));
  CHECK(net.rx_busy_seconds()[0] == 0.0);
}

TEST_CASE("network model: a hot receiver queues two senders into one NIC") {
  network_model net(3, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  // Both senders transmit 10 us at once; host 2 receives them one after the other.
  CHECK(us(net.transfer(0, 2, 12'500, t0)) == 15);
  CHECK(us(net.transfer(1, 2, 12'500, t0)) == 25);
  // A third, later sender queues behind both.
  CHECK(us(net.transfer(0, 2, 12'500, t0)) == 35);
}

TEST_CASE("network model: a busy sender queues its own messages; dilation scales every delay") {
  network_model net(3, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  CHECK(us(net.transfer(0, 1, 12'500, t0)) == 15);
  CHECK(us(net.transfer(0, 2, 12'500, t0)) == 25); // waits 10 us for its own NIC
  network_model slow(2, {5.0, 10.0, 4.0});
  CHECK(us(slow.transfer(0, 1, 12'500, t0)) == 60); // 4 x 15 us
}

TEST_CASE("network model: per link, later messages never arrive before earlier ones") {
  network_model net(3, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  auto last = t0;
  for (int i = 0; i < 50; ++i) {
    const auto sent = t0 + microseconds(i);
    const auto bytes = (i % 3 == 0) ? 100'000 : 10; // big and tiny messages mixed
    const auto arrival = sent + net.transfer(0, 1, std::uint64_t(bytes), sent);
    CHECK(arrival >= last);
    last = arrival;
    net.transfer(2, 1, 5'000, sent); // and another sender competing for host 1
  }
}

TEST_CASE("network model: a slow NIC divides its bandwidth inside its window only") {
  network_model net(2, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  net.slow(1, t0 + milliseconds(1), t0 + milliseconds(2), 0.1); // receiver at 1 Gbit/s
  CHECK(us(net.transfer(0, 1, 12'500, t0)) == 15);       // before: 10 us + 5 us
  const auto t1 = t0 + microseconds(1500);
  // Sending at 10 Gbit/s takes 10 us; receiving at 1 Gbit/s 100 us, starting
  // when the first bit arrives (5 us): 105 us.
  CHECK(us(net.transfer(0, 1, 12'500, t1)) == 105);
  CHECK(us(net.transfer(1, 0, 12'500, t1)) == 105);       // its sending side too
  const auto t2 = t0 + milliseconds(3);
  CHECK(us(net.transfer(0, 1, 12'500, t2)) == 15);        // after: back to normal
}
