// The network-model options (net.*), the auto time dilation and the net
// fields of the metrics JSON and summary.
#include <doctest/doctest.h>

#include <thread>

#include "report/run_metrics.hpp"
#include "config/train_config.hpp"

namespace {

std::optional<std::string> configure(std::vector<std::string> args, runtime::train_config& c) {
  runtime::option_set o;
  runtime::add_train_options(o);
  if (auto err = o.parse(args))
    return err;
  return runtime::build_train_config(o, c);
}

} // namespace

TEST_CASE("net options: off by default, 20 us, 25 Gbit/s, auto dilation") {
  runtime::train_config c;
  REQUIRE_FALSE(configure({}, c));
  CHECK_FALSE(c.net.enabled);
  CHECK(c.net.latency_us == 20.0);
  CHECK(c.net.bandwidth_gbps == 25.0);
  CHECK(c.net.dilation == 0.0);
}

TEST_CASE("net options: auto dilation is trainers x workers / scheduler threads, at least 1") {
  runtime::train_config c;
  REQUIRE_FALSE(configure({"--net.enabled=true", "--cluster.trainers=8", "--cluster.workers=2",
                           "--scheduler.max-threads=4", "--net.latency-us=5",
                           "--net.bandwidth-gbps=100"},
                          c));
  CHECK(c.net.enabled);
  CHECK(c.net.latency_us == 5.0);
  CHECK(c.net.bandwidth_gbps == 100.0);
  CHECK(runtime::effective_dilation(c) == 4.0);
  c.cluster.trainers = 1;
  CHECK(runtime::effective_dilation(c) == 1.0); // 2 / 4 -> at least 1
  c.cluster.max_threads = 0;                    // the hardware's cores
  c.cluster.trainers = 64;
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(runtime::effective_dilation(c) == doctest::Approx(std::max(1.0, 128 / cores)));
  c.net.dilation = 3; // explicit
  CHECK(runtime::effective_dilation(c) == 3.0);
}

TEST_CASE("net options: a dilation below 1 and the model in sequential mode are errors") {
  runtime::train_config c;
  auto err = configure({"--net.dilation=0.5"}, c);
  REQUIRE(err);
  CHECK(err->find("net.dilation") != std::string::npos);
  err = configure({"--net.enabled=true", "--cluster.mode=sequential"}, c);
  REQUIRE(err);
  CHECK(err->find("net.enabled") != std::string::npos);
  CHECK(configure({"--net.bandwidth-gbps=0"}, c)); // out of range
}

TEST_CASE("metrics: simulated ex/s and net settings only with the network model") {
  runtime::run_metrics m;
  m.mode = "simulated";
  m.examples = 1000;
  m.seconds = 2;
  CHECK_FALSE(m.simulated_examples_per_second());
  auto j = runtime::to_json(m);
  CHECK(j.find("\"simulated_examples_per_second\":null") != std::string::npos);
  CHECK(j.find("\"net\":null") != std::string::npos);
  CHECK(runtime::summary(m).find("simulated") == std::string::npos);

  runtime::net_metrics nm;
  nm.latency_us = 20;
  nm.bandwidth_gbps = 25;
  nm.dilation = 4;
  nm.bytes = 12345;
  m.net = nm;
  REQUIRE(m.simulated_examples_per_second());
  CHECK(*m.simulated_examples_per_second() == 2000.0); // 500 ex/s x 4
  j = runtime::to_json(m);
  CHECK(j.find("\"simulated_examples_per_second\":2000") != std::string::npos);
  CHECK(j.find("\"dilation\":4") != std::string::npos);
  CHECK(j.find("\"bytes\":12345") != std::string::npos);
  CHECK(runtime::summary(m).find("2000 simulated ex/s") != std::string::npos);
}
