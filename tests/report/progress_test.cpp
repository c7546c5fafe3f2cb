// The progress reporter (report/progress.hpp): what it hands to /metrics at
// the end of a run.
#include <doctest/doctest.h>

#include "report/metrics_endpoint.hpp"
#include "report/progress.hpp"

using namespace runtime;

TEST_CASE("progress: a trainer lost during the run keeps its last counts on /metrics") {
  std::string err;
  auto e = metrics_endpoint::start("127.0.0.1", 0, "coordinator", "", &err);
  REQUIRE_MESSAGE(e, err);
  progress_reporter p("none", 1.0, "");
  p.set_metrics(e.get());
  progress_sample live;
  live.examples = 150;
  live.trainers = {{0, 100, 3}, {1, 50, 2}};
  p.update(live);
  progress_sample last; // only the survivor reports at the end
  last.examples = 250;
  last.trainers = {{0, 200, 5}};
  p.finish(last);
  const auto page = e->render();
  CAPTURE(page);
  CHECK(page.find("shadowsync_trainer_examples_total{role=\"coordinator\",trainer=\"0\"} 200\n") !=
        std::string::npos);
  CHECK(page.find("shadowsync_trainer_examples_total{role=\"coordinator\",trainer=\"1\"} 50\n") !=
        std::string::npos);
  CHECK(page.find("shadowsync_trainer_sync_rounds_total{role=\"coordinator\",trainer=\"1\"} 2\n") !=
        std::string::npos);
  CHECK(page.find("shadowsync_examples_total{role=\"coordinator\"} 250\n") != std::string::npos);
}
