// sparse_ring_reduce without actors (DCT for MA/BMUF with dct.dp-ring=reduce):
// N members pass thresholded partial sums round a ring through a queue the
// test delivers. Every member must end with the same agreed sums to the bit,
// and nothing may be lost: the agreed sums plus what the members kept add up
// to their changes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "actors/sparse_ring_reduce.hpp"

namespace {

using actors::sparse_ring_reduce;
using messages::ring_sparse;

// Takes the entries at or above tau (every nonzero one at tau 0).
void take_above(float tau, float* x, std::size_t n, model::sparse_vector& out) {
  model::threshold(x, n, tau, out);
  for (std::size_t k = 0; k < out.nnz(); ++k)
    x[out.index[k]] -= out.value[k];
}

struct reduce_sim {
  std::uint32_t n, size;
  float tau;
  std::vector<std::unique_ptr<sparse_ring_reduce>> members;
  std::vector<std::uint64_t> sent; // payloads sent per member
  std::deque<std::pair<std::uint32_t, ring_sparse>> wire; // (destination, payload)

  reduce_sim(std::uint32_t n_, std::uint32_t size_, float tau_)
      : n(n_), size(size_), tau(tau_), sent(n_, 0) {
    for (std::uint32_t r = 0; r < n; ++r)
      members.push_back(std::make_unique<sparse_ring_reduce>(
        r, n, size,
        [this, r](ring_sparse&& p) {
          ++sent[r];
          wire.emplace_back((r + 1) % n, std::move(p));
        },
        [this](std::uint32_t, float* x, std::size_t m, model::sparse_vector& out) {
          take_above(tau, x, m, out);
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

// Member r's change in round k: dense, values in (-1, 1).
std::vector<float> change_of(std::uint32_t r, std::uint64_t k, std::uint32_t size) {
  std::mt19937 g(std::uint32_t(131 * r + k));
  std::uniform_real_distribution<float> v(-1.0f, 1.0f);
  std::vector<float> x(size);
  for (auto& e : x)
    e = v(g);
  return x;
}

} // namespace

TEST_CASE("sparse ring reduce: the same agreed sums everywhere, and nothing lost (N = 1..6)") {
  for (std::uint32_t n = 1; n <= 6; ++n) {
    CAPTURE(n);
    const std::uint32_t size = 53; // chunks of unequal sizes
    reduce_sim sim(n, size, 0.6f);
    std::vector<std::vector<float>> acc(n);
    std::vector<double> total(size, 0.0);
    for (std::uint32_t r = 0; r < n; ++r) {
      acc[r] = change_of(r, 1, size);
      for (std::uint32_t i = 0; i < size; ++i)
        total[i] += acc[r][i];
    }
    for (std::uint32_t r = 0; r < n; ++r)
      REQUIRE(sim.members[r]->begin(1, acc[r].data()) == "");
    sim.deliver_all();
    std::vector<float> first(size, 0.0f);
    sim.members[0]->add_sum(first.data(), 1.0f);
    std::size_t agreed = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      CHECK(sim.members[r]->done());
      std::vector<float> got(size, 0.0f);
      sim.members[r]->add_sum(got.data(), 1.0f);
      CHECK(std::memcmp(got.data(), first.data(), sizeof(float) * size) == 0);
      CHECK(sim.sent[r] == 2 * (n - 1));
    }
    for (std::uint32_t i = 0; i < size; ++i) {
      double kept = 0;
      for (std::uint32_t r = 0; r < n; ++r)
        kept += acc[r][i];
      CHECK(std::fabs(first[i] + kept - total[i]) < 1e-5);
      agreed += first[i] != 0.0f;
      // An agreed entry was at or above the threshold at its owner's last
      // step; the rest stayed behind.
      CHECK((first[i] == 0.0f || std::fabs(first[i]) >= 0.6f));
    }
    CHECK(agreed > 0);
    CHECK(agreed < size);
  }
}

TEST_CASE("sparse ring reduce: with every entry taken, the agreed sums are the exact sum") {
  for (std::uint32_t n : {2u, 3u, 5u}) {
    CAPTURE(n);
    const std::uint32_t size = 40;
    reduce_sim sim(n, size, 0.0f);
    std::vector<std::vector<float>> acc(n);
    for (std::uint32_t r = 0; r < n; ++r)
      acc[r] = change_of(r, 2, size);
    // The sum in the ring's order: chunk c is summed from member c (its
    // first sender) on round the ring.
    const auto chunks = model::split_range(size, n);
    std::vector<float> expect(size, 0.0f);
    for (std::uint32_t c = 0; c < n; ++c)
      for (std::uint32_t k = 0; k < n; ++k) {
        const auto r = (c + k) % n;
        for (std::size_t i = chunks[c].offset; i < chunks[c].offset + chunks[c].size; ++i)
          expect[i] = k == 0 ? acc[r][i] : expect[i] + acc[r][i];
      }
    for (std::uint32_t r = 0; r < n; ++r)
      REQUIRE(sim.members[r]->begin(1, acc[r].data()) == "");
    sim.deliver_all();
    for (std::uint32_t r = 0; r < n; ++r) {
      std::vector<float> got(size, 0.0f);
      sim.members[r]->add_sum(got.data(), 1.0f);
      CHECK(std::memcmp(got.data(), expect.data(), sizeof(float) * size) == 0);
      for (float v : acc[r])
        CHECK(v == 0.0f); // nothing kept
    }
  }
}

TEST_CASE("sparse ring reduce: a member one round ahead has its payloads stashed") {
  reduce_sim sim(3, 30, 0.5f);
  std::vector<std::vector<float>> acc(3);
  for (std::uint32_t r = 0; r < 3; ++r) {
    acc[r] = change_of(r, 1, 30);
    REQUIRE(sim.members[r]->begin(1, acc[r].data()) == "");
  }
  while (!sim.members[0]->done()) {
    auto [dst, p] = std::move(sim.wire.front());
    sim.wire.pop_front();
    REQUIRE(sim.members[dst]->receive(std::move(p)) == "");
  }
  std::vector<float> first(30, 0.0f);
  sim.members[0]->add_sum(first.data(), 1.0f);
  acc[0] = change_of(0, 2, 30);
  REQUIRE(sim.members[0]->begin(2, acc[0].data()) == "");
  sim.deliver_all(); // member 1 gets round 2's payload from 0 before finishing round 1
  for (std::uint32_t r = 1; r < 3; ++r) {
    REQUIRE(sim.members[r]->done());
    std::vector<float> got(30, 0.0f);
    sim.members[r]->add_sum(got.data(), 1.0f);
    CHECK(got == first);
    acc[r] = change_of(r, 2, 30);
    REQUIRE(sim.members[r]->begin(2, acc[r].data()) == "");
  }
  sim.deliver_all();
  std::vector<float> second(30, 0.0f);
  sim.members[0]->add_sum(second.data(), 1.0f);
  for (std::uint32_t r = 1; r < 3; ++r) {
    CHECK(sim.members[r]->round() == 2);
    std::vector<float> got(30, 0.0f);
    sim.members[r]->add_sum(got.data(), 1.0f);
    CHECK(got == second);
  }
}

TEST_CASE("sparse ring reduce: stale, duplicate, misplaced and undecodable payloads are reported") {
  reduce_sim sim(3, 30, 0.5f);
  auto& m1 = *sim.members[1];
  auto acc = change_of(1, 1, 30);
  REQUIRE(m1.begin(1, acc.data()) == "");
  // Step 0 at member 1 receives chunk 0 (10 entries), step 1 chunk 2.
  model::sparse_vector ten;
  ten.size = 10;
  ten.index = {3};
  ten.value = {1.0f};
  ring_sparse p;
  p.round = 1;
  p.step = 4;
  CHECK(m1.receive(ring_sparse{p}).find("step 4 of 4") != std::string::npos);
  p.step = 1; // early: stashed
  p.origin = 2;
  p.payload.values = model::encode(ten);
  CHECK(m1.receive(ring_sparse{p}) == "");
  CHECK(m1.receive(ring_sparse{p}).find("duplicate") != std::string::npos);
  ring_sparse wrong;
  wrong.round = 1;
  wrong.origin = 1; // step 0 carries chunk 0
  wrong.payload.values = model::encode(ten);
  CHECK(m1.receive(std::move(wrong)).find("expected chunk 0") != std::string::npos);
  ring_sparse bad;
  bad.round = 1;
  bad.origin = 0;
  model::sparse_vector twelve = ten;
  twelve.size = 12;
  bad.payload.values = model::encode(twelve);
  const auto err = m1.receive(std::move(bad));
  CHECK(err.find("chunk 0") != std::string::npos);
  CHECK(err.find("12") != std::string::npos);
  ring_sparse old;
  old.round = 0;
  CHECK(m1.receive(std::move(old)).find("stale") != std::string::npos);
  // Two rounds ahead at most: 4 (N - 1) = 8 early payloads.
  reduce_sim fresh(3, 30, 0.5f);
  auto& m = *fresh.members[0];
  std::size_t accepted = 0;
  for (std::uint64_t k = 1; k <= 2; ++k)
    for (std::uint32_t s = 0; s < 4; ++s) {
      ring_sparse e;
      e.round = k;
      e.step = s;
      accepted += m.receive(std::move(e)) == "";
    }
  CHECK(accepted == 8);
  ring_sparse more;
  more.round = 3;
  CHECK(m.receive(std::move(more)).find("two rounds ahead") != std::string::npos);
}
