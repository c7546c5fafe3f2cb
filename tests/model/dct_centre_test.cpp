// DCT's centre reply and per-layer thresholds (model/dct_sync.hpp): the
// three pictures stay bit-identical at both ends, keep 1 is EASGD that pulls
// toward the stepped centre, and each layer gets its share of a range.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "model/dct_sync.hpp"
#include "dct_test_util.hpp"

namespace {

using dct_test::drift;

using model::dct_mirror;
using model::dct_sender;
using model::dct_settings;

// One round with the centre reply, as the syncer runs it: the reply moves
// the trainer's picture of the centre, then the trainer pulls itself.
void centre_round(dct_sender& tx, dct_mirror& rx, std::vector<float>& w,
                  std::vector<float>& centre, float alpha) {
  const auto r = rx.exchange(tx.encode_change(w.data()), centre.data(), alpha);
  tx.on_reply(r);
  const auto& p = tx.pull(w.data());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] -= p[i];
}

dct_settings centre_settings(double keep, double reply_keep) {
  dct_settings s;
  s.dp_centre = true;
  s.dp_alpha = 0.2f;
  s.dp_keep = keep;
  s.dp_reply_keep = reply_keep;
  return s;
}

} // namespace

TEST_CASE("dct centre reply: keep 1 pulls toward the stepped centre, as EASGD's two halves") {
  const std::size_t n = 3000;
  const auto s = centre_settings(1.0, 1.0);
  std::mt19937 g(3), g2(3);
  std::vector<float> origin(n, 0.25f);
  dct_sender tx(s, n, 1, origin.data());
  dct_mirror rx(s, n, 2, origin.data());
  std::vector<float> w = origin, c = origin, w2 = origin, c2 = origin;
  for (int r = 0; r < 40; ++r) {
    drift(w, g, 0.01f);
    drift(w2, g2, 0.01f);
    centre_round(tx, rx, w, c, 0.2f);
    for (std::size_t i = 0; i < n; ++i) { // by hand: c += a (w - c); w -= a (w - c)
      c2[i] += 0.2f * (w2[i] - c2[i]);
      w2[i] -= 0.2f * (w2[i] - c2[i]);
    }
  }
  double err = 0;
  for (std::size_t i = 0; i < n; ++i)
    err = std::max(err, double(std::fabs(w[i] - w2[i]) + std::fabs(c[i] - c2[i])));
  CHECK(err < 1e-5);
  CHECK(tx.centre() == c); // keep 1: the trainer knows the centre exactly
}

TEST_CASE("dct centre reply: image and mirror, and both pictures of the centre, stay identical") {
  const std::size_t n = 20000;
  for (bool half : {false, true}) {
    auto s = centre_settings(0.02, 0.05);
    s.half = half;
    s.refresh = 5;
    std::mt19937 g(7);
    std::vector<float> origin(n, 0.0f);
    drift(origin, g, 1.0f);
    dct_sender tx(s, n, 1, origin.data());
    dct_mirror rx(s, n, 2, origin.data());
    std::vector<float> w = origin, c = origin;
    for (int r = 0; r < 25; ++r) {
      drift(w, g, 0.01f);
      centre_round(tx, rx, w, c, 0.2f);
      REQUIRE(tx.image() == rx.mirror());
      REQUIRE(tx.centre() == rx.centre());
    }
    const double back = double(rx.counts().values) / double(rx.counts().entries);
    CHECK(back > 0.02);
    CHECK(back < 0.1);
  }
}

TEST_CASE("dct centre reply: the replica follows the centre even when few entries come back") {
  // Two trainers drift apart by opposite steady steps; the centre sits
  // between them. With the d reply at 1 % the replicas drift apart almost
  // freely; with the centre reply at the same 1 % the pull is dense and
  // holds them near the centre.
  const std::size_t n = 5000;
  auto spread = [&](bool centre_reply) {
    auto s = centre_settings(0.01, 0.01);
    s.dp_centre = centre_reply;
    std::vector<float> origin(n, 0.0f);
    dct_sender a(s, n, 1, origin.data()), b(s, n, 3, origin.data());
    dct_mirror ma(s, n, 2, origin.data()), mb(s, n, 4, origin.data());
    std::vector<float> wa = origin, wb = origin, c = origin;
    std::mt19937 g(11);
    for (int r = 0; r < 100; ++r) {
      drift(wa, g, 0.002f);
      drift(wb, g, 0.002f);
      for (std::size_t i = 0; i < n; ++i) {
        wa[i] += 0.01f;
        wb[i] -= 0.01f;
      }
      for (auto [tx, rx, w] : {std::tuple{&a, &ma, &wa}, std::tuple{&b, &mb, &wb}}) {
        if (centre_reply) {
          centre_round(*tx, *rx, *w, c, 0.2f);
        } else {
          const auto r2 = rx->exchange(tx->encode_change(w->data()), c.data(), 0.2f);
          model::scatter_add(r2, w->data(), -1.0f);
          tx->on_reply(r2);
        }
      }
    }
    double gap = 0;
    for (std::size_t i = 0; i < n; ++i)
      gap += wa[i] - wb[i];
    return gap / double(n);
  };
  const double with_centre = spread(true), with_d = spread(false);
  // Dense EASGD at alpha 0.2 settles near a gap of 0.02 / (2 x 0.2) x ... a
  // few hundredths; 100 rounds of 0.02 apart with no pull is 2.
  CHECK(with_centre < 0.3);
  CHECK(with_d > 2 * with_centre);
}

TEST_CASE("dct per layer: each layer gets its share of a range") {
  // Two layers whose changes differ 100x in scale: one threshold over the
  // range sends almost only the large one; one per layer sends about the
  // keep of each.
  const std::size_t n = 20000, cut = 5000;
  std::mt19937 g(5);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = d(g) * (i < cut ? 0.01f : 1.0f);
  auto small_sent = [&](std::vector<std::size_t> bounds) {
    model::dct_layer_thresholds t(0.05, 10, 1, bounds);
    model::sparse_vector out;
    model::dct_counts c;
    t.apply(x.data(), out, c);
    std::size_t small = 0;
    for (auto i : out.index)
      small += i < cut;
    CHECK(c.refreshes == bounds.size() - 1);
    CHECK(out.nnz() > 0.04 * n);
    CHECK(out.nnz() < 0.06 * n);
    return double(small) / double(cut);
  };
  CHECK(small_sent({0, n}) < 0.001);
  const double per_layer = small_sent(model::dct_segments({0, 1000 + cut, 99999}, 1000, n));
  CHECK(per_layer > 0.04);
  CHECK(per_layer < 0.06);
  CHECK(model::dct_segments({}, 7, 10) == std::vector<std::size_t>{0, 10});
  CHECK(model::dct_segments({0, 10, 12, 30}, 10, 10) == std::vector<std::size_t>{0, 2, 10});
}

TEST_CASE("dct sync: log8 values keep the syncer's image and the shard's mirror identical") {
  // The sender's picture takes the value its level decodes to; the shard
  // decodes the same byte: the same bits at both ends, round after round.
  const std::size_t n = 20000;
  for (bool centre : {false, true}) {
    auto s = centre_settings(0.02, 0.05);
    s.dp_centre = centre;
    s.log8 = true;
    REQUIRE(s.rounds_log8());
    std::mt19937 g(17);
    std::vector<float> origin(n, 0.0f);
    drift(origin, g, 1.0f);
    dct_sender tx(s, n, 1, origin.data());
    dct_mirror rx(s, n, 2, origin.data());
    std::vector<float> w = origin, c = origin;
    for (int r = 0; r < 20; ++r) {
      drift(w, g, 0.01f);
      const auto& sent = tx.encode_change(w.data());
      REQUIRE(sent.log8);
      model::sparse_vector wire;
      const auto bytes = model::encode(sent);
      REQUIRE_FALSE(model::decode(bytes.data(), bytes.size(), std::uint32_t(n), wire));
      REQUIRE(wire.value == sent.value); // what the image took is what arrives
      const auto& back = rx.exchange(wire, c.data(), 0.2f);
      tx.on_reply(back);
      if (centre) {
        const auto& p = tx.pull(w.data());
        for (std::size_t i = 0; i < n; ++i)
          w[i] -= p[i];
      } else {
        model::scatter_add(back, w.data(), -1.0f);
      }
      REQUIRE(tx.image() == rx.mirror());
    }
  }
}

TEST_CASE("dct per layer: the lane-mask pass sends what an entry-by-entry pass does") {
  // Segments of odd lengths (tails shorter than a vector), zeros, -0, NaN
  // and entries equal to tau (tau is a sampled entry): the same entries in
  // the same order as |x| >= tau, x != 0 one at a time, with tau estimated
  // as dct_threshold does on its first use.
  const std::size_t n = 4109;
  std::mt19937 g(23);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = i % 7 == 0 ? 0.0f : i % 11 == 0 ? -0.0f : i % 13 == 0 ? NAN : d(g);
  const std::vector<std::size_t> bounds{0, 5, 37, 1000, 1003, n};
  for (double keep : {0.3, 0.02}) {
    model::dct_layer_thresholds t(keep, 10, 3, bounds);
    for (bool all : {false, true}) {
      model::sparse_vector out;
      model::dct_counts c;
      t.apply(x.data(), out, c, all);
      std::vector<std::uint32_t> index;
      std::vector<float> value;
      for (std::size_t s = 0; s + 1 < bounds.size(); ++s) {
        const std::size_t len = bounds[s + 1] - bounds[s];
        const float tau =
          all ? 0.0f : model::estimate_threshold(x.data() + bounds[s], len, keep, 3 + 7919 * s + 1);
        for (std::size_t i = bounds[s]; i < bounds[s + 1]; ++i)
          if (x[i] != 0.0f && std::fabs(x[i]) >= tau) {
            index.push_back(std::uint32_t(i));
            value.push_back(x[i]);
          }
      }
      CHECK(out.size == n);
      CHECK(out.index == index);
      CHECK(out.value == value);
      CHECK(out.nnz() > 0);
    }
  }
}
