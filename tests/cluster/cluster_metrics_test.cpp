// Aggregation of trainer reports into run metrics, against hand-computed values.
#include <doctest/doctest.h>

#include "cluster/cluster_metrics.hpp"

TEST_CASE("sync gaps are the batches between consecutive rounds") {
  messages::sync_stats s;
  s.batches_at_round = {4, 9, 9, 15}; // gaps 4, 5, 0, 6
  CHECK(runtime::sync_gaps(s) == std::vector<double>{4, 5, 0, 6});
}

TEST_CASE("reports aggregate into examples, NE, gap, blocked fraction and bytes") {
  messages::trainer_report a, b;
  a.work.examples = 100;
  a.work.loss_sum = 50;
  a.work.positives = 25;
  a.work.busy_seconds = 10;
  a.work.blocked_seconds = 1;
  a.work.lookup_bytes = 1000;
  a.work.malformed_lines = 1;
  a.work.batches = 4;
  a.work.cpu_seconds = 2.5;
  a.work.dense_step_cpu_seconds = 0.25;
  a.work.thread_moves = 3;
  a.sync.rounds = 2;
  a.sync.bytes_sent = 400;
  a.sync.batches_at_round = {2, 6}; // gaps 2, 4
  b = a;
  b.work.blocked_seconds = 3;
  b.sync.batches_at_round = {6}; // gap 6
  b.replica.values = {2, 4};
  a.replica.values = {0, 2};
  runtime::run_metrics m;
  runtime::aggregate_reports({a, b}, 5.0, m);
  CHECK(m.examples == 200);
  CHECK(m.examples_per_second() == doctest::Approx(40)); // 200 / 5 s
  // loss 100 over 200 examples = 0.5; base rate 0.25 -> H = 0.562335
  CHECK(m.train_ne == doctest::Approx(0.5 / 0.562335).epsilon(1e-5));
  CHECK(m.sync.rounds == 4);
  CHECK(*m.sync.sync_gap_mean == doctest::Approx(4.0)); // (2 + 4 + 6) / 3
  CHECK(*m.sync.sync_gap_max == doctest::Approx(6.0));
  CHECK(m.sync.worker_blocked_fraction == doctest::Approx(0.2)); // (1 + 3) / (10 + 10)
  CHECK(m.bytes.lookup == 2000);
  CHECK(m.malformed_lines == 2); // one per trainer
  CHECK(m.sync.bytes == 800);
  REQUIRE(m.workers);
  CHECK(m.workers->batches == 8);
  CHECK(m.workers->cpu_seconds == doctest::Approx(5.0));
  CHECK(m.workers->dense_step_cpu_seconds == doctest::Approx(0.5));
  CHECK(m.workers->thread_moves == 6);
  CHECK(runtime::average_replicas({a, b}) == std::vector<float>{1, 3});
  // Per-host virtual time, dilation 2, one worker per trainer: trainer a
  // computes 4 s and waits 1 s blocked + 1 s for rows (wall) = 4 + 2 / 2 = 5 s
  // -> 100 / 5 = 20 ex/s; trainer b waits 3 + 1 -> 4 + 4 / 2 = 6 s -> 16.67.
  a.work.cpu_seconds = b.work.cpu_seconds = 4;
  a.work.lookup_wait_seconds = b.work.lookup_wait_seconds = 1;
  CHECK(runtime::host_examples_per_second({a, b}, 1, 2.0) == doctest::Approx(20.0 + 100.0 / 6.0));
}
