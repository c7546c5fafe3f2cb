// The /metrics page's text (report/metrics_page.hpp): families, types,
// labels and values in the Prometheus text format.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>

#include "report/metrics_page.hpp"

#include <limits>

using namespace runtime;

namespace {

// name -> type from the "# TYPE" lines; fails on a family declared twice.
std::map<std::string, std::string> types_of(const std::string& page) {
  std::map<std::string, std::string> types;
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream f(line.substr(7));
      std::string name, type;
      f >> name >> type;
      CHECK_MESSAGE(types.count(name) == 0, "family declared twice: " << name);
      types[name] = type;
    }
  return types;
}

bool has_line(const std::string& page, const std::string& line) {
  return page.find("\n" + line + "\n") != std::string::npos || page.rfind(line + "\n", 0) == 0;
}

} // namespace

TEST_CASE("metrics page: before the first sample only training_finished, 0") {
  metrics_snapshot s;
  const auto page = prometheus_text(s);
  CHECK(has_line(page, "shadowsync_training_finished{role=\"coordinator\"} 0"));
  CHECK(types_of(page).size() == 1);
}

TEST_CASE("metrics page: a live sample; counters end in _total, every sample typed") {
  metrics_snapshot s;
  s.node = "t1";
  progress_sample p;
  p.examples = 12800;
  p.train_ne = 0.875;
  p.sync_gap = 4.0;
  p.sync_rounds = 50;
  p.blocked_fraction = 0.25;
  p.bytes = 1000;
  p.sync_bytes = 400;
  p.lookup_bytes = 350;
  p.push_bytes = 250;
  p.shard_lookup_bytes = {200, 150};
  p.shard_push_bytes = {100, 150};
  p.trainers = {{0, 6000, 20}, {1, 6800, 30}};
  s.live = p;
  s.live_wall_seconds = 2.0;
  const auto page = prometheus_text(s);
  const std::string l = "{role=\"coordinator\",node=\"t1\"";
  CHECK(has_line(page, "shadowsync_examples_total" + l + "} 12800"));
  CHECK(has_line(page, "shadowsync_examples_per_second" + l + "} 6400")); // 12800 / 2 s
  CHECK(has_line(page, "shadowsync_train_ne" + l + "} 0.875"));
  CHECK(has_line(page, "shadowsync_sync_rounds_total" + l + "} 50"));
  CHECK(has_line(page, "shadowsync_sync_gap_batches" + l + "} 4"));
  CHECK(has_line(page, "shadowsync_sync_blocked_ratio" + l + "} 0.25"));
  CHECK(has_line(page, "shadowsync_bytes_total" + l + ",kind=\"lookup\"} 350"));
  CHECK(has_line(page, "shadowsync_bytes_total" + l + ",kind=\"push\"} 250"));
  CHECK(has_line(page, "shadowsync_bytes_total" + l + ",kind=\"dense_sync\"} 400"));
  CHECK(has_line(page, "shadowsync_shard_bytes_total" + l + ",shard=\"1\",kind=\"lookup\"} 150"));
  CHECK(has_line(page, "shadowsync_shard_bytes_total" + l + ",shard=\"0\",kind=\"push\"} 100"));
  CHECK(has_line(page, "shadowsync_trainer_examples_total" + l + ",trainer=\"1\"} 6800"));
  CHECK(has_line(page, "shadowsync_trainer_sync_rounds_total" + l + ",trainer=\"0\"} 20"));
  CHECK(page.find("dct_bytes") == std::string::npos); // no DCT bytes: absent
  CHECK(page.find("virtual_seconds") == std::string::npos); // wall clock: none
  CHECK(page.find("eval_ne") == std::string::npos);         // not known yet: absent
  const auto types = types_of(page);
  for (const auto& [name, type] : types) {
    const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    CHECK_MESSAGE((type == "counter") == total, name << " is a " << type);
  }
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#')
      CHECK_MESSAGE(types.count(line.substr(0, line.find('{'))) == 1, "untyped sample: " << line);
}

TEST_CASE("metrics page: live DCT bytes until the final metrics replace them") {
  metrics_snapshot s;
  progress_sample p;
  p.examples = 10;
  p.sync_bytes = 90;
  p.dct_sync_bytes = 90;
  s.live = p;
  auto page = prometheus_text(s);
  CHECK(has_line(page, "shadowsync_dct_bytes_total{role=\"coordinator\",kind=\"dense_sync\"} 90"));
  CHECK(page.find("kind=\"embedding\"") == std::string::npos); // no dct.mp
  run_metrics m;
  m.mode = "simulated";
  m.dct = dct_metrics{};
  m.dct->bytes = 180; // sent and received
  s.final_metrics = m;
  page = prometheus_text(s);
  CHECK(has_line(page, "shadowsync_dct_bytes_total{role=\"coordinator\",kind=\"dense_sync\"} 180"));
  types_of(page); // the family once
}

TEST_CASE("metrics page: virtual clock rate per virtual second") {
  metrics_snapshot s;
  progress_sample p;
  p.examples = 1000;
  p.virtual_seconds = 4.0;
  s.live = p;
  s.live_wall_seconds = 0.5; // not the span: virtual seconds are
  const auto page = prometheus_text(s);
  CHECK(has_line(page, "shadowsync_examples_per_second{role=\"coordinator\"} 250"));
  CHECK(has_line(page, "shadowsync_virtual_seconds_total{role=\"coordinator\"} 4"));
}

TEST_CASE("metrics page: the final metrics add eval, bytes by kind, checkpoints, failures") {
  metrics_snapshot s;
  s.role = "coordinator";
  run_metrics m;
  m.mode = "simulated";
  m.examples = 5000;
  m.seconds = 2.5;
  m.train_ne = 0.9;
  m.eval = model::eval_result{100, 0.95, 0.6, 0.7, 1.0, 0.25};
  m.bytes.lookup = 11;
  m.bytes.push = 22;
  m.bytes.dense_sync = 33;
  m.trainer_examples_per_second = {1000, 1500};
  m.checkpoint = checkpoint_metrics{};
  m.checkpoint->cuts = 3;
  m.lost_trainers = {"trainer 1 lost"};
  s.final_metrics = m;
  const auto page = prometheus_text(s);
  const std::string l = "{role=\"coordinator\"";
  CHECK(has_line(page, "shadowsync_training_finished" + l + "} 1"));
  CHECK(has_line(page, "shadowsync_examples_total" + l + "} 5000"));
  CHECK(has_line(page, "shadowsync_examples_per_second" + l + "} 2000")); // 5000 / 2.5 s
  CHECK(has_line(page, "shadowsync_eval_ne" + l + "} 0.94999999999999996")); // %.17g of 0.95
  CHECK(has_line(page, "shadowsync_link_bytes_total" + l + ",kind=\"lookup\"} 11"));
  CHECK(has_line(page, "shadowsync_link_bytes_total" + l + ",kind=\"push\"} 22"));
  CHECK(has_line(page, "shadowsync_link_bytes_total" + l + ",kind=\"dense_sync\"} 33"));
  CHECK(has_line(page, "shadowsync_trainer_examples_per_second" + l + ",trainer=\"1\"} 1500"));
  CHECK(has_line(page, "shadowsync_checkpoints_total" + l + ",kind=\"cut\"} 3"));
  CHECK(has_line(page, "shadowsync_failures_total" + l + ",kind=\"trainer_lost\"} 1"));
  CHECK(page.find("dct_bytes") == std::string::npos); // no DCT in this run
  CHECK(page.find("gauc") == std::string::npos);      // no data.user in this run
  types_of(page);                                      // no family twice
}

TEST_CASE("metrics page: GAUC with data.user, absent when no user has both classes") {
  metrics_snapshot s;
  run_metrics m;
  m.mode = "sequential";
  m.eval = model::eval_result{100, 0.95, 0.6, 0.7, 1.0, 0.25};
  m.eval->grouped = true;
  m.eval->gauc = model::gauc_result{0.625, 40, 12, 70};
  s.final_metrics = m;
  auto page = prometheus_text(s);
  CHECK(has_line(page, "shadowsync_eval_gauc{role=\"coordinator\"} 0.625"));
  CHECK(has_line(page, "shadowsync_eval_gauc_users{role=\"coordinator\"} 12"));
  types_of(page);
  m.eval->gauc = model::gauc_result{std::numeric_limits<double>::quiet_NaN(), 40, 0, 0};
  s.final_metrics = m;
  page = prometheus_text(s);
  CHECK(page.find("gauc") == std::string::npos);
}

TEST_CASE("metrics page: label values are escaped") {
  CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  metrics_snapshot s;
  s.node = "n\"1";
  CHECK(prometheus_text(s).find("node=\"n\\\"1\"") != std::string::npos);
}
