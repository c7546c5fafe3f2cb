// The run timeline (output.dir/timeline.csv): sampling times, interval rates,
// CSV format, the final row, and the progress sums it is fed from.
#include <doctest/doctest.h>

#include <sstream>

#include "cluster/cluster_metrics.hpp"
#include "report/timeline.hpp"

namespace {

runtime::progress_sample sample(std::uint64_t examples, std::uint64_t rounds = 0) {
  runtime::progress_sample s;
  s.examples = examples;
  s.train_ne = 0.9;
  s.sync_rounds = rounds;
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

} // namespace

TEST_CASE("timeline rows come once per interval with the rate since the previous row") {
  std::ostringstream csv;
  runtime::timeline t(1.0, &csv);
  t.offer_at(sample(100), 0.5);   // before the first interval: no row
  t.offer_at(sample(200), 1.0);   // row 1: 200 ex in 1 s
  t.offer_at(sample(300), 1.5);   // too early
  t.offer_at(sample(700), 2.25);  // row 2: 500 ex in 1.25 s = 400 ex/s
  t.offer_at(sample(800), 3.0);   // too early: due at 3.25, one interval after row 2
  REQUIRE(t.rows().size() == 2);
  CHECK(t.rows()[0].time_s == doctest::Approx(1.0));
  CHECK(t.rows()[0].examples_per_s == doctest::Approx(200.0));
  CHECK(t.rows()[1].examples == 700);
  CHECK(t.rows()[1].examples_per_s == doctest::Approx(400.0));
  const auto l = lines(csv.str());
  REQUIRE(l.size() == 3); // header and two rows, written as they were taken
  CHECK(l[0] == "time_s,examples,examples_per_s,train_ne,sync_rounds,sync_gap,blocked_fraction,bytes");
  // No sync gap and no blocked fraction in these samples: empty fields.
  CHECK(l[1] == "1.000,200,200.0,0.900000,0,,,0");
}

TEST_CASE("the final row is dated at the end mark and carries the final values") {
  std::ostringstream csv;
  runtime::timeline t(1.0, &csv);
  t.offer_at(sample(1000, 4), 1.0);
  t.mark_end_at(1.5);
  runtime::progress_sample fin = sample(1600, 6);
  fin.sync_gap = 2.5;
  fin.blocked_fraction = 0.125;
  fin.bytes = 123456789012ull; // beyond 32 bits, printed whole
  t.finish(fin);
  t.offer_at(sample(9999), 10.0); // after finish: ignored
  REQUIRE(t.rows().size() == 2);
  CHECK(t.rows()[1].time_s == doctest::Approx(1.5));
  CHECK(t.rows()[1].examples_per_s == doctest::Approx(1200.0)); // 600 ex in 0.5 s
  CHECK(lines(csv.str()).back() == "1.500,1600,1200.0,0.900000,6,2.5000,0.125000,123456789012");
}

TEST_CASE("a run shorter than one interval still has its final row") {
  runtime::timeline t(5.0, nullptr);
  t.offer_at(sample(10), 0.1);
  t.mark_end_at(0.2);
  t.finish(sample(20));
  REQUIRE(t.rows().size() == 1);
  CHECK(t.rows()[0].examples_per_s == doctest::Approx(100.0)); // 20 ex in 0.2 s
}

TEST_CASE("final_sample takes the run metrics; sequential mode has no blocked fraction") {
  runtime::run_metrics m;
  m.mode = "simulated";
  m.examples = 50;
  m.train_ne = 0.8;
  m.sync.rounds = 7;
  m.sync.sync_gap_mean = 3.0;
  m.sync.worker_blocked_fraction = 0.25;
  m.bytes.lookup = 1;
  m.bytes.push = 2;
  m.bytes.dense_sync = 4;
  auto s = runtime::final_sample(m);
  CHECK(s.sync_rounds == 7);
  CHECK(*s.sync_gap == doctest::Approx(3.0));
  CHECK(*s.blocked_fraction == doctest::Approx(0.25));
  CHECK(s.bytes == 7); // 1 + 2 + 4
  m.mode = "sequential";
  CHECK_FALSE(runtime::final_sample(m).blocked_fraction);
}

TEST_CASE("summed progress reports give rounds, blocked fraction and bytes") {
  messages::progress_report a, total;
  a.examples = 100;
  a.batches = 10;
  a.sync_rounds = 4;
  a.worker_seconds = 2.0;
  a.blocked_seconds = 0.5;
  a.lookup_bytes = 600;
  a.push_bytes = 400;
  a.sync_bytes = 24;
  a.dct_sync_bytes = 24;
  a.read_bytes = 4096;
  a.shard_lookup_bytes = {100, 500};
  a.shard_push_bytes = {150, 250};
  a.trainers = {{1, 100, 4}};
  auto b = a;
  b.shard_lookup_bytes = {7}; // (a report of fewer shards sums into the first)
  b.trainers = {{0, 100, 4}};
  runtime::add_progress(total, a);
  runtime::add_progress(total, b);
  auto s = runtime::progress_of(total);
  CHECK(s.sync_rounds == 8);
  CHECK(*s.sync_gap == doctest::Approx(2.5));          // 20 batches / 8 rounds
  CHECK(*s.blocked_fraction == doctest::Approx(0.25)); // 1 s of 4 s
  CHECK(s.bytes == 2048);                              // 2 x (600 + 400 + 24)
  CHECK(s.lookup_bytes == 1200);
  CHECK(s.push_bytes == 800);
  CHECK(s.sync_bytes == 48);
  CHECK(s.dct_sync_bytes == 48);
  CHECK(s.dct_embedding_bytes == 0);
  CHECK(total.read_bytes == 8192); // (the coordinator's share done)
  CHECK(s.shard_lookup_bytes == std::vector<std::uint64_t>{107, 500});
  CHECK(s.shard_push_bytes == std::vector<std::uint64_t>{300, 500});
  REQUIRE(s.trainers.size() == 2); // one entry per trainer, ordered by index
  CHECK(s.trainers[0].trainer == 0);
  CHECK(s.trainers[1].trainer == 1);
  CHECK(s.trainers[1].examples == 100);
  CHECK(s.trainers[1].sync_rounds == 4);
  CHECK_FALSE(runtime::progress_of(messages::progress_report{}).blocked_fraction);
}

TEST_CASE("virtual clock: a busy-share column per host, the share since the previous row") {
  std::ostringstream csv;
  runtime::timeline t(1.0, &csv, 3);
  auto s = sample(100);
  s.cores_per_host = 2;
  s.host_busy_seconds = {1.0, 0.5, 0.0}; // core seconds since the start
  t.offer_at(s, 1.0);                    // 1 s x 2 cores: 0.5, 0.25, 0
  s.host_busy_seconds = {2.0, 0.5, 3.0};
  t.offer_at(s, 3.0);                    // 2 s x 2 cores: 0.25, 0, 0.75
  // The final sample (from run_metrics) has none: the end mark's are used.
  auto end = s;
  end.host_busy_seconds = {2.8, 0.9, 3.0};
  t.mark_end_at(5.0, end);
  t.finish(sample(400));                 // 2 s x 2 cores: 0.2, 0.1, 0
  const auto l = lines(csv.str());
  REQUIRE(l.size() == 4);
  CHECK(l[0] == "time_s,examples,examples_per_s,train_ne,sync_rounds,sync_gap,blocked_fraction,bytes,"
                "host_busy_0,host_busy_1,host_busy_2");
  CHECK(l[1] == "1.000,100,100.0,0.900000,0,,,0,0.500000,0.250000,0.000000");
  CHECK(l[2] == "3.000,100,0.0,0.900000,0,,,0,0.250000,0.000000,0.750000");
  CHECK(l[3] == "5.000,400,150.0,0.900000,0,,,0,0.200000,0.100000,0.000000");
  // Without host columns (wall clock) samples with hosts print none.
  std::ostringstream plain;
  runtime::timeline w(1.0, &plain);
  w.offer_at(s, 1.0);
  CHECK(lines(plain.str())[1] == "1.000,100,100.0,0.900000,0,,,0");
}
