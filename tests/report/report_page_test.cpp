// The report page (report/report_page.hpp) and the run folders it reads
// (report/run_folder.hpp): escaping of everything a run holds, two runs
// overlaid, a run without a timeline, and the errors of malformed files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "report/report_page.hpp"
#include "report/run_folder.hpp"

using namespace runtime;

namespace {

const std::string header = timeline_header() + "\n";

run_folder make_run(const std::string& dir, const std::string& ini, const std::string& metrics,
                    const std::string& csv) {
  run_folder r;
  r.dir = dir;
  REQUIRE_FALSE(parse_settings(ini, dir + "/config.ini", &r.settings));
  if (!metrics.empty())
    REQUIRE_FALSE(parse_metrics(metrics, dir + "/metrics.json", &r.metrics));
  r.has_timeline = !csv.empty();
  if (r.has_timeline)
    REQUIRE_FALSE(parse_timeline(csv, dir + "/timeline.csv", &r.timeline));
  return r;
}

// The JSON the page hands its script.
nlohmann::json page_json(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const auto b = page.find(open);
  REQUIRE(b != std::string::npos);
  const auto e = page.find("</script>", b);
  REQUIRE(e != std::string::npos);
  return nlohmann::json::parse(page.substr(b + open.size(), e - b - open.size()));
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

const char* ini_a = "; comment\n[cluster]\ntrainers = 2\nembedding-shards = 1\ndense-shards = 1\n"
                    "[sync]\nalgorithm = \"s-easgd\"\n";
const char* metrics_a =
  "{\"mode\": \"simulated\", \"examples\": 4000, \"seconds\": 0.5, \"train_ne\": 0.91,\n"
  " \"sync\": {\"algorithm\": \"s-easgd\", \"bytes\": 2500000},\n"
  " \"sim\": {\"core_utilisation\": [0.5, 0.25, 0.125, 0.0625]}}";

} // namespace

TEST_CASE("report page: crafted settings and folder names stay text, never markup") {
  // A value that would close the data's <script>, open a script of its own
  // and break out of an attribute, if anything reached the page unescaped.
  const std::string evil = "</script><script src=//evil.example/x.js>alert(1)</script>\"'&<b>";
  const auto run = make_run("out/<img src=x onerror=alert(2)>",
                            std::string("[data]\ntrain = \"") + evil + "\"\n",
                            "{\"mode\": \"" + std::string("</script><b>x</b>") + "\"}",
                            header + "1.0,10,10.0,0.9,0,,,0\n");
  const auto page = report_page({run});
  CHECK(page.find(evil) == std::string::npos);
  CHECK(page.find("evil.example") != std::string::npos);            // it is shown ...
  CHECK(page.find("<script src") == std::string::npos);              // ... never as a tag
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("&lt;/script&gt;&lt;script src=//evil.example/x.js&gt;") != std::string::npos);
  // Two scripts: the data and the page's own; the data survives as JSON.
  CHECK(count(page, "<script") == 2);
  CHECK(count(page, "</script>") == 2);
  const auto data = page_json(page);
  CHECK(data["runs"][0]["name"] == "<img src=x onerror=alert(2)>");
  // Nothing to fetch: no URL scheme, and a policy that allows nothing else.
  CHECK(page.find("http:") == std::string::npos);
  CHECK(page.find("https:") == std::string::npos);
  CHECK(page.find("default-src 'none'") != std::string::npos);
}

TEST_CASE("report page: script_json escapes what could end a script element") {
  CHECK(script_json(nlohmann::json("</script>&")) == "\"\\u003c/script\\u003e\\u0026\"");
  CHECK(html_escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&#39;");
  // Invalid UTF-8 from a config file becomes U+FFFD instead of an exception.
  CHECK(script_json(nlohmann::json(std::string("a\xff"))) == "\"a\xef\xbf\xbd\"");
}

TEST_CASE("report page: two runs overlaid, with legend, summary columns and differing settings") {
  const auto a = make_run("out/run-a", ini_a, metrics_a,
                          header + "0.1,1000,10000.0,0.95,2,1.5,0.01,1000\n"
                                   "0.2,2000,10000.0,0.93,4,1.5,0.01,2000\n");
  const auto b = make_run("out/run-b/",
                          "[cluster]\ntrainers = 4\nembedding-shards = 1\ndense-shards = 1\n"
                          "[sync]\nalgorithm = \"fr-easgd\"\n",
                          "{\"mode\": \"simulated\", \"examples\": 4000, \"train_ne\": 0.92}",
                          header + "0.1,500,5000.0,,0,,,0\n0.3,1500,5000.0,0.96,1,3.0,,900\n"
                                   "0.4,4000,25000.0,0.92,2,3.0,0.2,1800\n");
  const auto page = report_page({a, b});
  const auto data = page_json(page);
  REQUIRE(data["runs"].size() == 2);
  CHECK(data["runs"][0]["name"] == "run-a");
  CHECK(data["runs"][1]["name"] == "run-b"); // the trailing '/' dropped
  CHECK(data["runs"][0]["color"] != data["runs"][1]["color"]);
  CHECK(data["runs"][0]["timeline"]["time_s"].size() == 2);
  CHECK(data["runs"][1]["timeline"]["time_s"].size() == 3);
  // An empty field is a gap (null), not a zero.
  CHECK(data["runs"][1]["timeline"]["train_ne"][0].is_null());
  CHECK(data["runs"][1]["timeline"]["bytes"][2] == 1800);
  // Hosts named from run-a's settings: 2 trainers, then the shards.
  const auto& hosts = data["runs"][0]["hosts"];
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0]["label"] == "trainer 0");
  CHECK(hosts[1]["label"] == "trainer 1");
  CHECK(hosts[2]["label"] == "embedding shard 0");
  CHECK(hosts[3]["label"] == "dense shard 0");
  CHECK(hosts[0]["share"] == 0.5);
  CHECK(data["runs"][1]["hosts"].empty()); // no sim in run-b's metrics
  // Legend and summary: one entry / column per run, values formatted.
  CHECK(count(page, "class=\"swatch\"") == 2);
  CHECK(page.find("<th>run-a</th><th>run-b</th>") != std::string::npos);
  CHECK(page.find("<td>2.50 MB</td>") != std::string::npos);   // 2 500 000 bytes of dense sync
  CHECK(page.find("<th>eval AUC</th>") == std::string::npos); // no run has it
  // The differing settings: trainers and algorithm, not the shard counts.
  CHECK(page.find("<tr><th>cluster.trainers</th><td>2</td><td>4</td></tr>") != std::string::npos);
  CHECK(page.find("<tr><th>sync.algorithm</th><td>&quot;s-easgd&quot;</td>"
                  "<td>&quot;fr-easgd&quot;</td></tr>") != std::string::npos);
  CHECK(page.find("<tr><th>cluster.dense-shards</th><td>1</td><td>1</td>") == std::string::npos);
  // Five line charts and the host bars for the script to draw.
  CHECK(count(page, "<svg class=\"plot\"") == 5);
  CHECK(count(page, "<svg class=\"bars\"") == 1);
}

TEST_CASE("report page: a run without a timeline still has its settings and summary") {
  const auto r = make_run("out/quiet", ini_a, metrics_a, "");
  const auto page = report_page({r});
  CHECK(page.find("<td>4000</td>") != std::string::npos);     // examples
  CHECK(page.find("<td>0.91</td>") != std::string::npos);     // train NE
  CHECK(page.find("<th>cluster.trainers</th><td>2</td>") != std::string::npos);
  CHECK(page.find("timeline.csv") == std::string::npos);      // the files row names none
  CHECK(page_json(page)["runs"][0]["timeline"]["time_s"].empty());
}

TEST_CASE("report page: host names under one-host placement and without settings") {
  run_folder r;
  REQUIRE_FALSE(parse_settings("[sim]\nplacement = \"one-host\"\n", "c.ini", &r.settings));
  CHECK(host_labels(r, 2) == std::vector<std::string>{"host 0 (every role)", "host 1 (idle)"});
  CHECK(host_labels(run_folder{}, 1) == std::vector<std::string>{"host 0"});
}

TEST_CASE("run folder: malformed files are refused naming file, line and what was wrong") {
  std::vector<run_setting> s;
  CHECK(parse_settings("[a]\nk = 1\nnot a setting\n", "d/config.ini", &s) ==
        "d/config.ini:3: expected 'key = value', got 'not a setting'");
  CHECK(parse_settings("k = 1\n", "d/config.ini", &s) ==
        "d/config.ini:1: 'key = value' before any [group]");
  std::vector<timeline_row> rows;
  CHECK(parse_timeline(header + "0.1,10,1.0,x1,0,,,0\n", "d/timeline.csv", &rows) ==
        "d/timeline.csv:2: column 'train_ne': 'x1' is not a number");
  CHECK(parse_timeline(header + "0.1,10,1.0\n", "d/timeline.csv", &rows) ==
        "d/timeline.csv:2: 3 fields, expected 8 (as in the header)");
  CHECK(parse_timeline("when,what\n", "d/timeline.csv", &rows)->rfind(
          "d/timeline.csv:1: the header has no column 'time_s'", 0) == 0);
  nlohmann::json j;
  CHECK(parse_metrics("{\"a\": 1,\n \"b\": }", "d/metrics.json", &j)->rfind("d/metrics.json:2:", 0) ==
        0);
  // A number past a double's range is refused by name, not thrown.
  CHECK(parse_metrics("{\"a\": 1e999}", "d/metrics.json", &j)->rfind("d/metrics.json:1:", 0) == 0);
  CHECK(parse_metrics("[1]", "d/metrics.json", &j) ==
        "d/metrics.json:1: expected a JSON object (the metrics written by train)");
}

TEST_CASE("run folder: read from disk; config.ini required, metrics or timeline enough") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ss-report-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  run_folder r;
  CHECK(read_run_folder((dir / "absent").string(), &r)->find("no such run folder") !=
        std::string::npos);
  CHECK(read_run_folder(dir.string(), &r) ==
        dir.string() + "/config.ini: missing (expected the run's settings, written by train "
                       "--output.dir)");
  std::ofstream(dir / "config.ini") << ini_a;
  CHECK(read_run_folder(dir.string(), &r)->find("neither metrics.json nor timeline.csv") !=
        std::string::npos);
  std::ofstream(dir / "metrics.json") << metrics_a;
  run_folder ok;
  CHECK_FALSE(read_run_folder(dir.string(), &ok));
  CHECK(ok.setting("cluster.trainers") == std::optional<std::string>("2"));
  CHECK(ok.metrics["examples"] == 4000);
  CHECK_FALSE(ok.has_timeline);
  std::ofstream(dir / "timeline.csv") << header << "1.0,10,10.0,0.9,0,,,0\n2.0,20\n";
  run_folder bad;
  CHECK(read_run_folder(dir.string(), &bad) ==
        (dir / "timeline.csv").string() + ":3: 2 fields, expected 8 (as in the header)");
  fs::remove_all(dir);
}

TEST_CASE("report page: the per-host busy share over time from timeline.csv's host_busy_H") {
  // 4 hosts as in ini_a: trainers 0 and 1, embedding shard 0, dense shard 0;
  // host 3 has no value in any row (no series), host 2 one gap.
  const auto a = make_run("out/run-a", ini_a, metrics_a,
                          timeline_header(4) + "\n"
                                               "0.1,1000,10000.0,0.95,2,1.5,0.01,1000,0.5,0.25,,\n"
                                               "0.2,2000,10000.0,0.93,4,1.5,0.01,2000,0.75,0.5,0.125,\n");
  REQUIRE(a.timeline.size() == 2);
  REQUIRE(a.timeline[0].host_busy.size() == 4);
  CHECK(*a.timeline[1].host_busy[0] == 0.75);
  CHECK_FALSE(a.timeline[0].host_busy[2]); // an empty field: absent
  const auto page = report_page({a});
  const auto data = page_json(page);
  const auto& busy = data["runs"][0]["host_busy"];
  REQUIRE(busy.size() == 3);
  CHECK(busy[0]["label"] == "trainer 0");
  CHECK(busy[0]["busy"] == nlohmann::json::array({0.5, 0.75}));
  CHECK(busy[2]["label"] == "embedding shard 0");
  CHECK(busy[2]["busy"][0].is_null());
  CHECK(busy[2]["busy"][1] == 0.125);
  CHECK(count(page, "<svg class=\"hostplot\"") == 1); // the chart the script draws them into
  std::vector<timeline_row> rows;
  CHECK(parse_timeline(timeline_header(2) + "\n0.1,10,1.0,,0,,,0,0.5,y\n", "d/timeline.csv",
                       &rows) == "d/timeline.csv:2: column 'host_busy_1': 'y' is not a number");
}
