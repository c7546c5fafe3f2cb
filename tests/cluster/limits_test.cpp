// Trust (issue 40), the limits rows: the options that size memory or time
// have ranges named in their errors (rows 7 and 10), train.max-examples is
// exact for any trainer count (row 8), the memory estimate counts what the
// batch options scale (row 9), and only numeric loopback is loopback (row 12).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "actors/reader.hpp"
#include "cluster/cluster_plan.hpp"
#include "config/deploy_config.hpp"
#include "cluster/memory_estimate.hpp"
#include "config/train_config.hpp"

namespace {

constexpr double gib = double(1ull << 30);

// The error of parsing and building `args`, if any.
std::optional<std::string> config_error(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  if (auto e = o.parse(args))
    return e;
  runtime::train_config c;
  return runtime::build_train_config(o, c);
}

runtime::train_config configure(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::train_config c;
  REQUIRE_FALSE(o.parse(args));
  REQUIRE_FALSE(runtime::build_train_config(o, c));
  return c;
}

bool has(const std::optional<std::string>& e, const std::string& part) {
  return e && e->find(part) != std::string::npos;
}

// A Criteo TSV of `rows` lines in a fresh temp folder; removed at scope end.
struct criteo_file {
  std::string path;
  explicit criteo_file(int rows) {
    path = (std::filesystem::temp_directory_path() /
            ("ss-limits-test-" + std::to_string(::getpid()) + ".tsv"))
             .string();
    std::ofstream out(path);
    for (int r = 0; r < rows; ++r) {
      out << (r % 2);
      for (int i = 0; i < 13; ++i)
        out << '\t' << r + i;
      for (int c = 0; c < 26; ++c)
        out << '\t' << std::hex << 0x1000 + r * 26 + c << std::dec;
      out << '\n';
    }
  }
  ~criteo_file() { std::filesystem::remove(path); }
};

// Examples trainer t's reader serves before its end, as the trainer asks.
std::uint64_t served_by(const runtime::train_config& cfg, std::size_t t) {
  runtime::trainer_peers peers;
  const auto tc = runtime::trainer_config_for(cfg, t, {}, peers);
  actors::reader_state st;
  st.cfg = tc.reader;
  std::uint64_t n = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    auto b = st.next();
    REQUIRE(b);
    if (b->size() == 0)
      return n;
    n += b->size();
  }
  FAIL("the reader did not end");
  return n;
}

} // namespace

TEST_CASE("row 7: data.columns has a range; the error names the key, the value and the range") {
  auto e = config_error({"--data.columns=1000000000000"});
  CHECK(has(e, "'data.columns'"));
  CHECK(has(e, "1000000000000"));
  CHECK(has(e, "[0, 65536]"));
  runtime::option_set o;
  runtime::add_train_options(o);
  CHECK_FALSE(o.parse({"--data.columns=65536"}));
  CHECK(o.parse({"--data.columns=65537"}));
}

TEST_CASE("row 7: a column index beyond the most columns is refused before the files are read") {
  // The file does not exist: the index is checked first, naming the key.
  const std::vector<std::string> csv = {"--data.format=delimited", "--data.train=/nonexistent.csv",
                                        "--data.delimiter=,"};
  auto with = [&](std::vector<std::string> more) {
    auto args = csv;
    args.insert(args.end(), more.begin(), more.end());
    return config_error(args);
  };
  auto e = with({"--data.categorical=400000000"});
  CHECK(has(e, "option 'data.categorical'"));
  CHECK(has(e, "400000000"));
  CHECK(has(e, "0..65535"));
  // More than 9 digits is still an index (it used to become a header name).
  e = with({"--data.categorical=2", "--data.dense=99999999999"});
  CHECK(has(e, "option 'data.dense'"));
  CHECK(has(e, "99999999999"));
  e = with({"--data.categorical=2", "--data.label=65536"});
  CHECK(has(e, "option 'data.label'"));
  CHECK(has(e, "0..65535"));
  // Within the range: the next problem is the missing file.
  e = with({"--data.categorical=65535"});
  CHECK(has(e, "/nonexistent.csv"));
}

TEST_CASE("row 8: train.max-examples is exact for any trainer count (a zero share reads nothing)") {
  criteo_file f(400); // every trainer's part holds more than its share of any cap below
  for (std::size_t trainers : {1, 2, 3, 4, 5, 8}) {
    for (std::uint64_t max : {1, 2, 3, 5, 7, 39}) {
      auto cfg = configure({"--data.train=" + f.path, "--cluster.trainers=" + std::to_string(trainers),
                            "--train.max-examples=" + std::to_string(max), "--train.batch-size=4"});
      std::uint64_t total = 0;
      for (std::size_t t = 0; t < trainers; ++t)
        total += served_by(cfg, t);
      CAPTURE(trainers);
      CAPTURE(max);
      CHECK(total == max);
    }
  }
  // 0 is still "every example": 400 lines over 3 trainers.
  auto cfg = configure({"--data.train=" + f.path, "--cluster.trainers=3"});
  CHECK(served_by(cfg, 0) + served_by(cfg, 1) + served_by(cfg, 2) == 400);
}

TEST_CASE("row 9: the estimate counts the batch buffers of every trainer") {
  // Measured before the fix: 64 trainers x batch 1048576 reached 17 GB peak
  // RSS on a 2 000-row file (each reader sizes its buffer for a whole batch:
  // 1048576 x (label 4 + 13 dense x 4 + 26 hashes x 8 B) = 264 MiB).
  const auto big = configure({"--cluster.trainers=64", "--train.batch-size=1048576"});
  CHECK(runtime::estimate_memory(big).total() >= 16.5 * gib);
  auto err = runtime::check_memory(big, 16.0 * gib);
  REQUIRE(err);
  CHECK(err->find("option 'train.batch-size' = 1048576") == 0);
  CHECK(err->find("64 trainers") != std::string::npos);
  CHECK(err->find("more than this machine's 16.0 GiB") != std::string::npos);
  // cluster.memory-limit-gib replaces the machine's memory.
  auto limited = configure({"--cluster.trainers=64", "--train.batch-size=1048576",
                            "--cluster.memory-limit-gib=16"});
  err = runtime::check_memory(limited, 1e15);
  REQUIRE(err);
  CHECK(err->find("more than cluster.memory-limit-gib, 16.0 GiB") != std::string::npos);
  limited.cluster.memory_limit_bytes = 64.0 * gib;
  CHECK_FALSE(runtime::check_memory(limited, 1.0));
  // eval-batch-size 4194304 took 1.3 GB beside a default run.
  const double base = runtime::estimate_memory(configure({})).total();
  const double eval = runtime::estimate_memory(configure({"--train.eval-batch-size=4194304"})).total();
  CHECK(eval - base >= 1.0 * gib);
  // Sequential: one model, one reader, but the same batch.
  const auto seq = configure({"--cluster.mode=sequential", "--train.batch-size=1048576"});
  CHECK(runtime::estimate_memory(seq).total() - base >= 0.25 * gib);
}

TEST_CASE("row 9: the estimate counts DCT state and workers") {
  const double base = runtime::estimate_memory(configure({})).total();
  CHECK(runtime::estimate_memory(configure({"--dct.dp=true"})).total() > base);
  CHECK(runtime::estimate_memory(configure({"--cluster.workers=8"})).total() > base);
}

TEST_CASE("row 9: the estimate counts checkpoint copies and CPR's bookkeeping") {
  const auto base = runtime::estimate_memory(configure({"--model.rows-per-table=1000000"}));
  CHECK(base.checkpoint_bytes == 0);
  // A cut written beside training copies up to the shards' whole tables.
  const auto cuts = runtime::estimate_memory(configure(
    {"--model.rows-per-table=1000000", "--checkpoint.dir=/tmp/x", "--checkpoint.every-examples=1000"}));
  CHECK(cuts.checkpoint_bytes >= base.embedding_bytes);
  // SSU keeps cpr.ssu-sample keys per shard: a billion of them is 8 GB a shard.
  const auto ssu = runtime::estimate_memory(configure(
    {"--checkpoint.dir=/tmp/x", "--recovery.mode=partial", "--cpr.policy=ssu",
     "--cpr.ssu-sample=1000000000", "--cluster.embedding-shards=2", "--cpr.interval=10"}));
  CHECK(ssu.checkpoint_bytes >= 16.0 * 1e9);
  auto err = runtime::check_memory(configure({"--checkpoint.dir=/tmp/x", "--recovery.mode=partial",
                                              "--cpr.policy=ssu", "--cpr.ssu-sample=1000000000",
                                              "--cluster.embedding-shards=2", "--cpr.interval=10"}),
                                   8.0 * gib);
  REQUIRE(err);
  INFO(*err);
  CHECK(err->find("cpr.ssu-sample") != std::string::npos);
  CHECK(err->find("checkpoints ") != std::string::npos);
}

TEST_CASE("row 10: timeouts and pauses have ranges that fit in nanoseconds") {
  auto e = config_error({"--cluster.timeout-ms=9223372036854775807"});
  CHECK(has(e, "'cluster.timeout-ms'"));
  CHECK(has(e, "9223372036854775807"));
  CHECK(has(e, "[1, 86400000]"));
  e = config_error({"--sync.min-pause-ms=9223372036854775"});
  CHECK(has(e, "'sync.min-pause-ms'"));
  CHECK(has(e, "[0, 3600000]"));
  e = config_error({"--checkpoint.every-seconds=1e12"});
  CHECK(has(e, "'checkpoint.every-seconds'"));
  // A product of two options in range can still be out of range.
  e = config_error({"--faults.mtbf=1e12", "--faults.time-scale=1e6"});
  CHECK(has(e, "faults.mtbf"));
  CHECK(has(e, "faults.time-scale"));
  CHECK_FALSE(config_error({"--cluster.timeout-ms=86400000", "--sync.min-pause-ms=3600000"}));
}

TEST_CASE("row 12: only numeric 127.0.0.0/8 and ::1 are loopback") {
  CHECK(runtime::is_loopback("127.0.0.1"));
  CHECK(runtime::is_loopback("127.255.3.4"));
  CHECK(runtime::is_loopback("::1"));
  CHECK(runtime::is_loopback("0:0:0:0:0:0:0:1"));
  CHECK_FALSE(runtime::is_loopback("127.foo.example"));
  CHECK_FALSE(runtime::is_loopback("127.0.0.1.evil.example"));
  CHECK_FALSE(runtime::is_loopback("127.0.0.256"));
  CHECK_FALSE(runtime::is_loopback("127.1"));
  CHECK_FALSE(runtime::is_loopback("localhost")); // a name: resolved by whatever NSS says
  CHECK_FALSE(runtime::is_loopback("128.0.0.1"));
  CHECK_FALSE(runtime::is_loopback("::2"));
  CHECK_FALSE(runtime::is_loopback(""));
}
