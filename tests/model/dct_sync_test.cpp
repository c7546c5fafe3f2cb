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

TEST_CASE("dct sync: the pull not sent is owed, so the centre follows dense EASGD") {
  // 16 trainers take turns at one centre, each replica drifting by noise;
  // the syncers send every change (keep 1) and the shard replies 2 % of
  // each trainer's pull. The pull not sent is the trainer's debt: the shard
  // steps the centre toward where the trainer stands once it is paid (w
  // less the debt), which is where dense EASGD's replica stands. So the
  // centre is dense EASGD's, up to rounding, whatever the reply keep. If
  // the unsent pull were dropped (d taken from w), the centre would follow
  // replicas that never heard most of it, and drift off with them.
  const std::size_t n = 2000, trainers = 16;
  const float alpha = 0.25f; // sync.alpha's default
  dct_settings s;
  s.dp_keep = 1.0;
  s.dp_reply_keep = 0.02;
  std::vector<float> origin(n, 0.0f);
  std::vector<dct_sender> tx;
  std::vector<dct_mirror> rx;
  for (std::size_t t = 0; t < trainers; ++t) {
    tx.emplace_back(s, n, 1 + t, origin.data());
    rx.emplace_back(s, n, 100 + t, origin.data());
  }
  std::vector<std::vector<float>> w(trainers, origin), dense_w = w;
  std::vector<float> c = origin, dense_c = origin, d(n);
  std::mt19937 g(11);
  std::normal_distribution<float> step(0.0f, 0.01f);
  std::vector<float> noise(n);
  for (int r = 0; r < 40; ++r)
    for (std::size_t t = 0; t < trainers; ++t) {
      for (auto& x : noise)
        x = step(g) + 0.002f * float(t); // each trainer drifts its own way
      for (std::size_t i = 0; i < n; ++i) {
        w[t][i] += noise[i];
        dense_w[t][i] += noise[i];
      }
      round(tx[t], rx[t], w[t], c, alpha);
      model::easgd_centre_step(dense_c.data(), dense_w[t].data(), alpha, d.data(), n);
      for (std::size_t i = 0; i < n; ++i)
        dense_w[t][i] -= d[i];
      REQUIRE(tx[t].image() == rx[t].mirror());
    }
  double err = 0, spread = 0;
  for (std::size_t i = 0; i < n; ++i) {
    err = std::max(err, double(std::fabs(c[i] - dense_c[i])));
    spread = std::max(spread, double(std::fabs(dense_c[i])));
  }
  CHECK(spread > 0.1); // the centre moved (40 rounds of 16 drifting replicas)
  CHECK(err < 1e-4);
  // The replicas themselves still owe part of their pull: the replies were sparse.
  double owed = 0;
  for (std::size_t i = 0; i < n; ++i)
    owed = std::max(owed, double(std::fabs(w[0][i] - dense_w[0][i])));
  CHECK(owed > 1e-3);
  CHECK(rx[0].counts().values < rx[0].counts().entries);
}

TEST_CASE("dct sync: the reduce's chunks pass dct.dp-reduce-keep, or dct.dp-keep when it is 0") {
  const std::size_t n = 40000, parts = 4;
  std::mt19937 g(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> a(n);
  for (auto& v : a)
    v = nd(g);
  auto sent = [&](double keep, double reduce_keep) {
    dct_settings s;
    s.dp_keep = keep;
    s.dp_reduce_keep = reduce_keep;
    model::dct_chunk_thresholds tau(s, n, parts, 3);
    model::dct_counts c;
    std::size_t values = 0;
    std::vector<float> x = a;
    for (std::size_t k = 0; k < parts; ++k) {
      model::sparse_vector out;
      tau.take(k, x.data() + k * (n / parts), out, c, false, false);
      values += out.nnz();
    }
    return double(values) / double(n);
  };
  CHECK(sent(0.01, 0) == doctest::Approx(0.01).epsilon(0.3));
  CHECK(sent(0.01, 0.05) == doctest::Approx(0.05).epsilon(0.3));
  CHECK(sent(0.05, 0.01) == doctest::Approx(0.01).epsilon(0.3));
}
