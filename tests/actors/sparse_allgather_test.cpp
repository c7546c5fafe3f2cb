// sparse_allgather without actors (DCT for MA/BMUF): N members pass sparse
// vectors round a ring through a queue the test delivers; every member must
// end with the same sum to the bit, in any interleaving of rounds.
#include <doctest/doctest.h>

#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "actors/sparse_allgather.hpp"

namespace {

using actors::sparse_allgather;
using messages::ring_sparse;

struct gather_sim {
  std::uint32_t n, size;
  std::vector<std::unique_ptr<sparse_allgather>> members;
  std::vector<std::uint64_t> sent; // messages sent per member
  std::deque<std::pair<std::uint32_t, ring_sparse>> wire; // (destination, vector)

  gather_sim(std::uint32_t n_, std::uint32_t size_) : n(n_), size(size_), sent(n_, 0) {
    for (std::uint32_t r = 0; r < n; ++r)
      members.push_back(std::make_unique<sparse_allgather>(
        r, n, size, [this, r](ring_sparse&& p) {
          ++sent[r];
          wire.emplace_back((r + 1) % n, std::move(p));
        }));
  }
  void deliver_all() {
    while (!wire.empty()) {
      auto [dst, p] = std::move(wire.front());
      wire.pop_front();
      REQUIRE(members[dst]->receive(std::move(p)) == "");
    }
  }
};

// Member r's vector in round k: random entries of random values.
model::sparse_vector vector_of(std::uint32_t r, std::uint64_t k, std::uint32_t size) {
  std::mt19937 g(std::uint32_t(97 * r + k));
  std::uniform_real_distribution<float> v(-1.0f, 1.0f);
  std::bernoulli_distribution pick(0.2);
  model::sparse_vector s;
  s.size = size;
  for (std::uint32_t i = 0; i < size; ++i)
    if (pick(g)) {
      s.index.push_back(i);
      s.value.push_back(v(g));
    }
  return s;
}

} // namespace

TEST_CASE("sparse all-gather: every member ends with the same sum, to the bit (N = 1..5)") {
  for (std::uint32_t n = 1; n <= 5; ++n) {
    gather_sim sim(n, 50);
    for (std::uint32_t r = 0; r < n; ++r)
      REQUIRE(sim.members[r]->begin(1, vector_of(r, 1, 50)) == "");
    sim.deliver_all();
    std::vector<float> expect(50, 0.0f);
    for (std::uint32_t r = 0; r < n; ++r)
      model::scatter_add(vector_of(r, 1, 50), expect.data(), 0.5f);
    for (std::uint32_t r = 0; r < n; ++r) {
      CHECK(sim.members[r]->done());
      std::vector<float> got(50, 0.0f);
      sim.members[r]->add_sum(got.data(), 0.5f);
      CHECK(std::memcmp(got.data(), expect.data(), sizeof(float) * 50) == 0);
      CHECK(sim.sent[r] == n - 1); // its own and n - 2 passed on
    }
  }
}

TEST_CASE("sparse all-gather: a member one round ahead has its vectors stashed") {
  gather_sim sim(3, 20);
  for (std::uint32_t r = 0; r < 3; ++r)
    REQUIRE(sim.members[r]->begin(1, vector_of(r, 1, 20)) == "");
  // Deliver until member 0 completes round 1 and begins round 2 while the
  // others still wait.
  while (!sim.members[0]->done()) {
    auto [dst, p] = std::move(sim.wire.front());
    sim.wire.pop_front();
    REQUIRE(sim.members[dst]->receive(std::move(p)) == "");
  }
  REQUIRE(sim.members[0]->begin(2, vector_of(0, 2, 20)) == "");
  sim.deliver_all(); // member 1 gets round 2's vector from 0 before finishing round 1
  for (std::uint32_t r = 1; r < 3; ++r) {
    CHECK(sim.members[r]->done());
    REQUIRE(sim.members[r]->begin(2, vector_of(r, 2, 20)) == "");
  }
  sim.deliver_all();
  std::vector<float> first(20, 0.0f);
  sim.members[0]->add_sum(first.data(), 1.0f);
  for (std::uint32_t r = 1; r < 3; ++r) {
    CHECK(sim.members[r]->done());
    CHECK(sim.members[r]->round() == 2);
    std::vector<float> got(20, 0.0f);
    sim.members[r]->add_sum(got.data(), 1.0f);
    CHECK(got == first);
  }
}

TEST_CASE("sparse all-gather: stale, duplicate, foreign and undecodable vectors are reported") {
  gather_sim sim(3, 10);
  auto& m1 = *sim.members[1];
  REQUIRE(m1.begin(1, vector_of(1, 1, 10)) == "");
  ring_sparse p;
  p.round = 1;
  p.origin = 1; // its own
  CHECK(m1.receive(ring_sparse{p}).find("from member 1 at member 1") != std::string::npos);
  p.origin = 2; // expected second (step 1): stashed until member 0's arrives
  p.payload.values = model::encode(vector_of(2, 1, 10));
  CHECK(m1.receive(ring_sparse{p}) == "");
  CHECK(m1.receive(ring_sparse{p}).find("duplicate") != std::string::npos);
  ring_sparse bad;
  bad.round = 1;
  bad.origin = 0;
  bad.payload.values = model::encode(vector_of(0, 1, 12)); // 12 entries, not 10
  const auto err = m1.receive(std::move(bad));
  CHECK(err.find("from member 0") != std::string::npos);
  CHECK(err.find("12") != std::string::npos);
  ring_sparse old;
  old.round = 0;
  old.origin = 0;
  CHECK(m1.receive(std::move(old)).find("stale") != std::string::npos);
  // Two rounds ahead at most: 2 (N - 1) = 4 early vectors.
  gather_sim fresh(3, 10);
  auto& m = *fresh.members[0];
  for (std::uint64_t k = 1; k <= 2; ++k)
    for (std::uint32_t o : {1u, 2u}) {
      ring_sparse e;
      e.round = k;
      e.origin = o;
      e.payload.values = model::encode(vector_of(o, k, 10));
      CHECK(m.receive(std::move(e)) == "");
    }
  ring_sparse more;
  more.round = 3;
  more.origin = 2;
  CHECK(m.receive(std::move(more)).find("two rounds ahead") != std::string::npos);
}
