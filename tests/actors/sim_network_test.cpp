// The simulated network's delays against hand-computed values.
#include <doctest/doctest.h>

#include "actors/sim_network.hpp"

using namespace std::chrono;

TEST_CASE("one message: latency + bytes / bandwidth; same host is free") {
  // 10 Gbit/s, 5 us: 12,500 bytes = 100,000 bits take 10 us on the wire.
  actors::sim_network net(2, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  CHECK(net.transfer(0, 0, 1'000'000, t0).count() == 0);
  CHECK(net.transfer(0, 1, 12'500, t0).count() == 15); // 10 us wire + 5 us latency
  CHECK(net.bytes_moved() == 12'500);
}

TEST_CASE("a hot receiver queues: two senders into one NIC") {
  actors::sim_network net(3, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  // Both senders transmit 10 us at once; host 2 receives them one after the other.
  CHECK(net.transfer(0, 2, 12'500, t0).count() == 15);
  CHECK(net.transfer(1, 2, 12'500, t0).count() == 25);
  // A third, later sender queues behind both.
  CHECK(net.transfer(0, 2, 12'500, t0).count() == 35);
}

TEST_CASE("a busy sender queues its own messages; dilation scales every delay") {
  actors::sim_network net(3, {5.0, 10.0, 1.0});
  const auto t0 = steady_clock::now();
  CHECK(net.transfer(0, 1, 12'500, t0).count() == 15);
  CHECK(net.transfer(0, 2, 12'500, t0).count() == 25); // waits 10 us for its own NIC
  actors::sim_network slow(2, {5.0, 10.0, 4.0});
  CHECK(slow.transfer(0, 1, 12'500, t0).count() == 60); // 4 x 15 us
}
