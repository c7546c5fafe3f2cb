// ring_allreduce without actors: N members exchange chunks through a queue the
// test delivers in chosen orders; every member must end with the exact sum.
// Values are small integers, so every float sum is exact whatever the order.
#include <doctest/doctest.h>

#include <deque>
#include <memory>
#include <numeric>
#include <vector>

#include "actors/ring_allreduce.hpp"

namespace {

using actors::ring_allreduce;
using messages::ring_chunk;

struct ring_sim {
  std::uint32_t n;
  std::vector<std::unique_ptr<ring_allreduce>> members;
  std::vector<std::vector<float>> data;
  std::deque<std::pair<std::uint32_t, ring_chunk>> wire; // (destination, chunk)

  ring_sim(std::uint32_t n_, std::size_t size) : n(n_), data(n_) {
    for (std::uint32_t r = 0; r < n; ++r) {
      members.push_back(std::make_unique<ring_allreduce>(
        r, n, [this, r](ring_chunk&& c) { wire.emplace_back((r + 1) % n, std::move(c)); }));
      data[r].resize(size);
      for (std::size_t i = 0; i < size; ++i)
        data[r][i] = float(10 * r + i); // member r, element i: 10 r + i
    }
  }
  std::vector<float> expected_sum() const {
    std::vector<float> s(data[0].size(), 0.0f);
    for (const auto& d : data)
      for (std::size_t i = 0; i < s.size(); ++i)
        s[i] += d[i];
    return s;
  }
  // Delivers queued chunks (FIFO) until none is left.
  void deliver_all() {
    while (!wire.empty()) {
      auto [dst, c] = std::move(wire.front());
      wire.pop_front();
      REQUIRE(members[dst]->receive(std::move(c)) == "");
    }
  }
};

} // namespace

TEST_CASE("syncer ring all-reduce: every member ends with the sum (N = 1..5, uneven chunks)") {
  for (std::uint32_t n = 1; n <= 5; ++n) {
    ring_sim sim(n, 7); // 7 floats: chunks of uneven size for n = 2..5, empty ones never
    const auto sum = sim.expected_sum();
    for (std::uint32_t r = 0; r < n; ++r)
      REQUIRE(sim.members[r]->begin(1, sim.data[r].data(), 7) == "");
    sim.deliver_all();
    for (std::uint32_t r = 0; r < n; ++r) {
      CHECK(sim.members[r]->done());
      CHECK(sim.data[r] == sum);
    }
    // Each member sends 2 (N-1) chunks; over all members every chunk travels
    // 2 (N-1) times, i.e. 2 (N-1) * 7 floats in all.
    std::uint64_t total = 0;
    for (auto& m : sim.members)
      total += m->bytes_sent();
    CHECK(total == 2 * (n - 1) * 7 * sizeof(float));
  }
}

TEST_CASE("syncer ring all-reduce: chunks for a round not begun yet are stashed") {
  ring_sim sim(3, 5);
  const auto sum = sim.expected_sum();
  // Members 0 and 1 begin; member 2 (slow) has not: the chunks of steps 0
  // and 1 from member 1 wait (1 got step 0 from 0 and went on).
  REQUIRE(sim.members[0]->begin(1, sim.data[0].data(), 5) == "");
  REQUIRE(sim.members[1]->begin(1, sim.data[1].data(), 5) == "");
  sim.deliver_all();
  CHECK(sim.members[2]->stashed() == 2);
  CHECK_FALSE(sim.members[0]->done());
  REQUIRE(sim.members[2]->begin(1, sim.data[2].data(), 5) == "");
  sim.deliver_all();
  for (std::uint32_t r = 0; r < 3; ++r)
    CHECK(sim.data[r] == sum);

  // Round 2: member 0 begins and runs ahead; 1 and 2 begin later.
  auto second = sim.data; // inputs of round 2: the sums of round 1
  REQUIRE(sim.members[0]->begin(2, sim.data[0].data(), 5) == "");
  sim.deliver_all();
  REQUIRE(sim.members[2]->begin(2, sim.data[2].data(), 5) == "");
  REQUIRE(sim.members[1]->begin(2, sim.data[1].data(), 5) == "");
  sim.deliver_all();
  for (std::uint32_t r = 0; r < 3; ++r) {
    CHECK(sim.members[r]->done());
    CHECK(sim.members[r]->round() == 2);
    for (std::size_t i = 0; i < 5; ++i)
      CHECK(sim.data[r][i] == 3 * second[0][i]); // three equal inputs
  }
}

TEST_CASE("syncer ring all-reduce: malformed, stale and duplicate chunks are reported") {
  std::vector<ring_chunk> sent;
  ring_allreduce m(0, 2, [&](ring_chunk&& c) { sent.push_back(std::move(c)); });
  std::vector<float> d{1, 2, 3, 4};
  REQUIRE(m.begin(1, d.data(), 4) == "");
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].chunk == 0); // rank 0 sends its own chunk first
  CHECK(sent[0].values.size() == 2);

  ring_chunk wrong_size{0, 1, 0, 1, messages::float_blob{std::vector<float>{1}}};
  CHECK(m.receive(std::move(wrong_size)) != "");
  ring_chunk bad_step{0, 1, 7, 1, messages::float_blob{std::vector<float>{1, 1}}};
  CHECK(m.receive(std::move(bad_step)) != ""); // N = 2 has steps 0 and 1 only
  ring_chunk future{0, 2, 0, 1, messages::float_blob{std::vector<float>{1, 1}}};
  CHECK(m.receive(ring_chunk{future}) == "");  // round 2: stashed
  CHECK(m.receive(std::move(future)) != "");   // the same again: duplicate
  ring_chunk stale{0, 0, 0, 1, messages::float_blob{std::vector<float>{1, 1}}};
  CHECK(m.receive(std::move(stale)) != "");    // round 0 never runs
}

TEST_CASE("syncer ring all-reduce: the early-chunk stash is bounded by two rounds") {
  // N = 3: 2(N-1) = 4 steps a round, at most 8 chunks may wait. A member that
  // has begun nothing gets a flood of distinct future chunks from a faulty
  // peer: the first 8 are stashed, the 9th is a protocol violation.
  std::vector<ring_chunk> sent;
  ring_allreduce m(1, 3, [&](ring_chunk&& c) { sent.push_back(std::move(c)); });
  CHECK(m.max_stashed() == 8);
  std::size_t accepted = 0;
  std::string err;
  for (std::uint64_t round = 1; round <= 5 && err.empty(); ++round)
    for (std::uint32_t step = 0; step < 4 && err.empty(); ++step) {
      ring_chunk c;
      c.round = round;
      c.step = step;
      err = m.receive(std::move(c));
      accepted += err.empty();
    }
  CHECK(accepted == 8);
  CHECK(m.stashed() == 8);
  CHECK(err.find("more than two rounds ahead") != std::string::npos);
}
