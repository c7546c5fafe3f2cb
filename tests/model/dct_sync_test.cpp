// DCT for EASGD (model/dct_sync.hpp): the two pictures stay bit-identical,
// keep = 1 is dense EASGD, the keep fraction is met, and error feedback is
// what lets a slow drift below the threshold reach the centre.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "model/dct_sync.hpp"
#include "model/half.hpp"
#include "model/sync_rules.hpp"
#include "dct_test_util.hpp"

namespace {

using dct_test::drift;

using model::dct_mirror;
using model::dct_sender;
using model::dct_settings;

// One EASGD round through DCT: w -= r at the trainer, as the syncer does.
void round(dct_sender& tx, dct_mirror& rx, std::vector<float>& w, std::vector<float>& centre,
           float alpha) {
  const auto r = rx.exchange(tx.encode_change(w.data()), centre.data(), alpha);
  model::scatter_add(r, w.data(), -1.0f);
  tx.on_reply(r);
}

} // namespace

TEST_CASE("dct sync: keep = 1 is dense EASGD, up to the rounding of w - image") {
  const std::size_t n = 5000;
  dct_settings s;
  s.dp_keep = 1.0;
  dct_sender tx(s, n, 1);
  dct_mirror rx(s, n, 2);
  std::mt19937 g(3), g2(3);
  std::vector<float> w(n, 0.5f), c(n, 0.0f), w2 = w, c2 = c, d(n);
  for (int r = 0; r < 50; ++r) {
    drift(w, g, 0.01f);
    drift(w2, g2, 0.01f);
    round(tx, rx, w, c, 0.2f);
    model::easgd_centre_step(c2.data(), w2.data(), 0.2f, d.data(), n);
    for (std::size_t i = 0; i < n; ++i)
      w2[i] -= d[i];
  }
  double err = 0;
  for (std::size_t i = 0; i < n; ++i)
    err = std::max(err, double(std::fabs(w[i] - w2[i]) + std::fabs(c[i] - c2[i])));
  CHECK(err < 1e-5);
  CHECK(tx.counts().values > 0.99 * double(tx.counts().entries));
}

// 30 rounds of a replica drifting by noise (from N(0, 1), no origin);
// `after_round` sees both ends after every round.
struct noisy_run {
  dct_sender tx;
  dct_mirror rx;
  noisy_run(const dct_settings& s, std::size_t n) : tx(s, n, 1), rx(s, n, 2) {}
  void go(std::size_t n, const std::function<void(const noisy_run&)>& after_round = {}) {
    std::mt19937 g(5);
    std::vector<float> w(n, 0.0f), c(n, 0.0f);
    drift(w, g, 1.0f);
    for (int r = 0; r < 30; ++r) {
      drift(w, g, 0.01f);
      round(tx, rx, w, c, 0.1f);
      if (after_round)
        after_round(*this);
    }
  }
};

TEST_CASE("dct sync: the syncer's image and the shard's mirror stay bit-identical") {
  const std::size_t n = 20000;
  dct_settings s;
  s.dp_keep = 0.05;
  {
    s.refresh = 7;
    noisy_run run(s, n);
    int checked = 0;
    run.go(n, [&](const noisy_run& r) {
      REQUIRE(r.tx.image() == r.rx.mirror());
      ++checked;
    });
    CHECK(checked == 30);
    // 29 thresholded rounds at each end, refreshed every 7: rounds 1, 8, 15, 22, 29.
    CHECK(run.tx.counts().refreshes == 5);
    CHECK(run.rx.counts().refreshes == 5);
    // The first send is every entry; afterwards about 5 % of them.
    const auto& c = run.tx.counts();
    const double later = double(c.values - n) / double(c.entries - n);
    CHECK(later > 0.02);
    CHECK(later < 0.10);
    // The shard's d shrinks as the centre catches up, so a threshold kept
    // for 7 rounds lets fewer through than asked: staleness under-sends.
    CHECK(run.rx.counts().values < 0.05 * double(run.rx.counts().entries));
  }
  { // Refreshed every round, the shard's replies meet the fraction too.
    s.refresh = 1;
    noisy_run run(s, n);
    run.go(n);
    const double back = double(run.rx.counts().values) / double(run.rx.counts().entries);
    CHECK(back > 0.04);
    CHECK(back < 0.065);
    CHECK(run.rx.counts().refreshes == 30);
  }
}

TEST_CASE("dct sync: from a common origin the first round is thresholded too") {
  const std::size_t n = 10000;
  dct_settings s;
  s.dp_keep = 0.02;
  std::mt19937 g(4);
  std::vector<float> origin(n, 0.0f);
  drift(origin, g, 1.0f);
  dct_sender tx(s, n, 1, origin.data());
  dct_mirror rx(s, n, 2, origin.data());
  std::vector<float> w = origin, c = origin;
  drift(w, g, 0.01f);
  round(tx, rx, w, c, 0.1f);
  CHECK(tx.image() == rx.mirror());
  CHECK(tx.counts().values < 0.03 * n);
  CHECK(tx.counts().refreshes == 1);
}

TEST_CASE("dct sync: a threshold estimated from a zero change is estimated again") {
  const std::size_t n = 10000;
  dct_settings s;
  s.dp_keep = 0.02;
  s.refresh = 1000;
  std::vector<float> origin(n, 0.5f);
  dct_sender tx(s, n, 1, origin.data());
  dct_mirror rx(s, n, 2, origin.data());
  std::vector<float> w = origin, c = origin;
  round(tx, rx, w, c, 0.1f); // before any step: nothing changed, nothing sent
  CHECK(tx.counts().values == 0);
  std::mt19937 g(4);
  drift(w, g, 0.01f);
  round(tx, rx, w, c, 0.1f);
  CHECK(tx.counts().refreshes == 2);
  CHECK(tx.counts().values < 0.03 * n); // not every changed entry
}

TEST_CASE("dct sync: error feedback carries a drift below the threshold to the centre") {
  // Half the entries move a lot each round (they set tau), the other half
  // creep by a step below it. Without error feedback the creep is never
  // sent; with it, it accumulates in w - image until it crosses tau.
  const std::size_t n = 4000;
  auto run = [&](bool ef) {
    dct_settings s;
    s.dp_keep = 0.5;
    s.error_feedback = ef;
    dct_sender tx(s, n, 1);
    dct_mirror rx(s, n, 2);
    std::mt19937 g(9);
    std::uniform_real_distribution<float> big(0.5f, 1.0f);
    std::vector<float> w(n, 0.0f), c(n, 0.0f);
    for (int r = 0; r < 200; ++r) {
      for (std::size_t i = 0; i < n; ++i)
        w[i] += i % 2 ? 0.01f : (r % 2 ? 1.0f : -1.0f) * big(g);
      round(tx, rx, w, c, 0.5f);
    }
    double creep = 0; // how far the centre followed the creeping half
    for (std::size_t i = 1; i < n; i += 2)
      creep += c[i];
    return creep / double(n / 2);
  };
  const double with = run(true), without = run(false);
  // Without: only the first round's 0.01 (the first send is whole) ever
  // reaches the centre. With: 0.77 of the 200 x 0.01 = 2 (what is still in
  // w - image below tau, and the centre's lag, make up the rest).
  CHECK(without < 0.011);
  CHECK(with > 0.5);
}

TEST_CASE("dct sync: half values keep the pictures identical, the rounding stays in w - image") {
  const std::size_t n = 20000;
  dct_settings s;
  s.dp_keep = 0.05;
  s.half = true;
  REQUIRE(s.rounds_half());
  noisy_run run(s, n);
  int checked = 0;
  run.go(n, [&](const noisy_run& r) {
    REQUIRE(r.tx.image() == r.rx.mirror()); // both summed the same halves
    ++checked;
  });
  CHECK(checked == 30);
  // With keep 1 every entry goes, rounded: the image is w with each entry's
  // rounding error left in w - image, and the next round sends it.
  dct_settings all;
  all.dp_keep = 1.0;
  all.half = true;
  std::mt19937 g(2);
  std::vector<float> w(n, 0.0f);
  drift(w, g, 1e-3f);
  dct_sender tx(all, n, 1);
  const auto sent = tx.encode_change(w.data());
  REQUIRE(sent.half);
  std::size_t inexact = 0;
  for (std::size_t k = 0; k < sent.nnz(); ++k) {
    const auto i = sent.index[k];
    CHECK(sent.value[k] == model::round_half(w[i]));
    inexact += tx.image()[i] != w[i];
  }
  CHECK(inexact > n / 2); // most of w is not a half
  // The second round sends exactly the rounding errors (w did not move).
  const auto again = tx.encode_change(w.data());
  std::size_t carried = 0;
  for (std::size_t k = 0; k < again.nnz(); ++k) {
    const auto i = again.index[k];
    CHECK(again.value[k] == model::round_half(w[i] - model::round_half(w[i])));
    ++carried;
  }
  CHECK(carried == inexact);
  // Without error feedback nothing is rounded: f32 values.
  dct_settings plain = all;
  plain.error_feedback = false;
  dct_sender tx2(plain, n, 1);
  CHECK_FALSE(tx2.encode_change(w.data()).half);
}
