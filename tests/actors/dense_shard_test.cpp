// dense_shard under the deterministic scheduler: the elastic exchange against
// model::easgd_centre_step, repeated exchanges, range errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "actors/dense_shard.hpp"
#include "model/sync_rules.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::dense_shard;

namespace {

actors::dense_shard_config config(float alpha = 0.25f) {
  actors::dense_shard_config c;
  c.shard = 2;
  c.offset = 10;
  c.initial = {1, 2, 3, 4};
  c.alpha = alpha;
  return c;
}

dense_range range(std::uint64_t offset, std::vector<float> v) {
  dense_range r;
  r.offset = offset;
  r.values.values = std::move(v);
  return r;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "dense shard: dump returns the initial centre") {
  auto shard = sys.spawn(dense_shard, config());
  auto c = request<dense_range>(shard, dump_atom::value);
  REQUIRE(c);
  CHECK(*c == range(10, {1, 2, 3, 4}));
}

TEST_CASE_FIXTURE(test::actor_fixture, "dense shard: one exchange is an EASGD centre step") {
  auto shard = sys.spawn(dense_shard, config(0.25f));
  auto d = request<dense_range>(shard, exchange_atom::value, range(10, {5, 2, -1, 4.5f}));
  REQUIRE(d);
  // d = 0.25 (w - c) = 0.25 * (4, 0, -4, 0.5); c += d.
  CHECK(*d == range(10, {1, 0, -1, 0.125f}));
  auto c = request<dense_range>(shard, dump_atom::value);
  REQUIRE(c);
  CHECK(*c == range(10, {2, 2, 2, 4.125f}));
}

TEST_CASE_FIXTURE(test::actor_fixture, "dense shard: repeated exchanges follow the EASGD math") {
  const float alpha = 0.3f;
  auto shard = sys.spawn(dense_shard, config(alpha));
  SUBCASE("a fixed replica pulls the centre geometrically: c_k = w - 0.7^k (w - c_0)") {
    const std::vector<float> w{5, -2, 3, 0}, c0{1, 2, 3, 4};
    for (int k = 1; k <= 5; ++k)
      REQUIRE(request<dense_range>(shard, exchange_atom::value, range(10, w)));
    auto c = request<dense_range>(shard, dump_atom::value);
    REQUIRE(c);
    for (std::size_t i = 0; i < 4; ++i)
      CHECK(c->values.values[i] ==
            doctest::Approx(w[i] - std::pow(0.7, 5) * (w[i] - c0[i])).epsilon(1e-5));
  }
  SUBCASE("two syncers alternating (w -= d after each reply) match the model step") {
    std::vector<float> wa{5, -2, 3, 0}, wb{-1, 0, 7, 2};
    std::vector<float> ea = wa, eb = wb, ec{1, 2, 3, 4}, ed(4);
    for (int round = 0; round < 4; ++round)
      for (auto* pair : {&wa, &wb}) {
        auto& w = *pair;
        auto& e = pair == &wa ? ea : eb;
        auto d = request<dense_range>(shard, exchange_atom::value, range(10, w));
        REQUIRE(d);
        model::easgd_centre_step(ec.data(), e.data(), alpha, ed.data(), 4);
        for (std::size_t i = 0; i < 4; ++i) {
          CHECK(d->values.values[i] == doctest::Approx(ed[i]));
          w[i] -= d->values.values[i];
          e[i] -= ed[i];
        }
      }
    auto c = request<dense_range>(shard, dump_atom::value);
    REQUIRE(c);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(c->values.values[i] == doctest::Approx(ec[i]));
      // The elastic force conserves w_a + w_b + c (each step moves d from w to c).
      const float start[] = {1 + 5 - 1, 2 - 2 + 0, 3 + 3 + 7, 4 + 0 + 2};
      CHECK(wa[i] + wb[i] + c->values.values[i] == doctest::Approx(start[i]));
    }
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "dense shard: a range that is not its own is refused") {
  auto shard = sys.spawn(dense_shard, config());
  for (auto bad : {range(11, {5, 5, 5, 5}), range(10, {5, 5, 5}), range(10, {})}) {
    auto r = request<dense_range>(shard, exchange_atom::value, bad);
    REQUIRE_FALSE(r);
    CHECK(code_of(r.error()) == errc::bad_request);
    CHECK(context_of(r.error()).find("dense-shard-2") != std::string::npos);
  }
  auto c = request<dense_range>(shard, dump_atom::value);
  REQUIRE(c);
  CHECK(*c == range(10, {1, 2, 3, 4})); // unchanged
}

TEST_CASE_FIXTURE(test::actor_fixture, "dense shard: an empty range and a bad alpha") {
  actors::dense_shard_config empty;
  empty.offset = 7; // split_range may hand a shard nothing
  auto e = sys.spawn(dense_shard, empty);
  auto d = request<dense_range>(e, exchange_atom::value, range(7, {}));
  REQUIRE(d);
  CHECK(d->values.size() == 0);
  auto bad = sys.spawn(dense_shard, config(1.5f));
  auto r = request<dense_range>(bad, dump_atom::value);
  REQUIRE_FALSE(r);
  // It quit at spawn: CAF answers for it; "no reply" would mean it still runs.
  CHECK(r.error() == caf::sec::request_receiver_down);
}
