// sim.calibration (config/calibration_file.hpp): a calibration file round-
// trips; a bad one is refused naming the file and the key; a constant given
// on the command line wins over the file; the run's settings, summary and
// metrics name where the constants came from.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "config/calibration_file.hpp"
#include "tests/config/train_config_check.hpp"
#include "config/train_config.hpp"
#include "report/run_metrics.hpp"

namespace {

namespace fs = std::filesystem;

// A file in this process's scratch folder, which is removed at exit.
std::string scratch(const std::string& name) {
  struct folder {
    fs::path dir = fs::temp_directory_path() / ("ss-calib-" + std::to_string(::getpid()));
    folder() { fs::create_directories(dir); }
    ~folder() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  static const folder f;
  return (f.dir / name).string();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

runtime::calibration_record sample() {
  runtime::calibration_record r;
  r.cpu = "Test CPU 9000";
  r.isa = "x86-64-v3";
  r.cores = 4;
  r.date = "2026-11-27T03:00:00Z";
  r.command = "shadowsync calibrate --out=x.json";
  r.note = "by hand";
  const double v[] = {123.5, 21.25, 0.5, 9.75, 20.5, 1.25, 40.5,   3.5,    850.0,
                      12.5,  6.5,   3.25, 55.5, 1.5, 7.5, 4.25, 34150.0, 8.75, 0.625, 64.5,
                      0.375};
  REQUIRE(runtime::calibration_keys().size() == std::size(v));
  for (std::size_t i = 0; i < runtime::calibration_keys().size(); ++i)
    r.sim[runtime::calibration_keys()[i]] = v[i];
  return r;
}

// The error of a train run's options, "" if none.
std::string config_error(const std::vector<std::string>& args, runtime::train_config& c) {
  return test::train_config_error(args, c);
}

} // namespace

TEST_CASE("a calibration file round-trips") {
  const auto path = scratch("round.json");
  const auto r = sample();
  write(path, runtime::calibration_json(r));
  runtime::calibration_record back;
  REQUIRE_FALSE(runtime::read_calibration(path, back));
  CHECK(back.cpu == r.cpu);
  CHECK(back.isa == r.isa);
  CHECK(back.cores == r.cores);
  CHECK(back.date == r.date);
  CHECK(back.command == r.command);
  CHECK(back.note == r.note);
  CHECK(back.sim == r.sim);
  // and a run reads its constants
  runtime::train_config c;
  REQUIRE(config_error({"--sim.calibration=" + path}, c) == "");
  CHECK(c.sim.engine.gflops == 123.5);
  CHECK(c.sim.engine.memory_gbps == 21.25);
  CHECK(c.sim.engine.message_us == 0.5);
  CHECK(c.sim.engine.lookup_row_ns == 9.75);
  CHECK(c.sim.engine.push_row_ns == 20.5);
  CHECK(c.sim.engine.core_contention == 1.25);
  CHECK(c.sim.engine.remote_message_us == 40.5);
  CHECK(c.sim.engine.remote_gbps == 3.5);
  CHECK(c.sim.engine.parse_example_ns == 850.0);
  CHECK(c.sim.engine.batch_id_ns == 12.5);
  CHECK(c.sim.engine.mp_push_value_ns == 6.5);
  CHECK(c.sim.engine.mp_reply_value_ns == 3.25);
  CHECK(c.sim.engine.mp_push_map_rows == 34150.0);
  CHECK(c.sim.engine.mp_push_value_big_ns == 8.75);
  CHECK(c.sim.engine.mp_decode_value_ns == 0.625);
  CHECK(c.sim.engine.sync_gbps == 64.5);
  CHECK(c.sim.engine.jitter == 0.375);
  CHECK(c.sim.engine.remote_tls_message_us == 55.5);
  CHECK(c.sim.engine.remote_tls_gbps == 1.5);
  CHECK_FALSE(c.sim.engine.remote_tls); // the run's choice, not the file's
}

TEST_CASE("a calibration file without the optional parse-example-ns, batch-id-ns, mp-*, "
          "remote-tls-* and remote-*streamed* keys reads them as 0 (the model's)") {
  const auto path = scratch("older.json");
  std::string text = runtime::calibration_json(sample());
  for (const std::string key :
       {"\n    \"batch-id-ns\": 12.5,", ",\n    \"parse-example-ns\": 850.0",
        ",\n    \"mp-push-value-ns\": 6.5", ",\n    \"mp-reply-value-ns\": 3.25",
        ",\n    \"remote-tls-gbps\": 1.5", ",\n    \"remote-tls-message-us\": 55.5",
        ",\n    \"remote-streamed-message-us\": 7.5",
        ",\n    \"remote-tls-streamed-message-us\": 4.25", ",\n    \"mp-push-map-rows\": 34150.0",
        ",\n    \"mp-push-value-big-ns\": 8.75", ",\n    \"mp-decode-value-ns\": 0.625",
        ",\n    \"sync-gbps\": 64.5", ",\n    \"jitter\": 0.375"}) {
    const auto at = text.find(key);
    REQUIRE(at != std::string::npos);
    text.erase(at, key.size());
  }
  write(path, text);
  runtime::calibration_record back;
  REQUIRE_FALSE(runtime::read_calibration(path, back));
  CHECK(back.sim.at("parse-example-ns") == 0.0);
  CHECK(back.sim.at("batch-id-ns") == 0.0);
  CHECK(back.sim.at("gflops") == 123.5);
  runtime::train_config c;
  REQUIRE(config_error({"--sim.calibration=" + path}, c) == "");
  CHECK(c.sim.engine.parse_example_ns == 0.0);
  CHECK(c.sim.engine.batch_id_ns == 0.0);
  CHECK(c.sim.engine.mp_push_value_ns == 0.0);
  CHECK(c.sim.engine.mp_reply_value_ns == 0.0);
  CHECK(c.sim.engine.mp_push_map_rows == 0.0);
  CHECK(c.sim.engine.mp_push_value_big_ns == 0.0);
  CHECK(c.sim.engine.mp_decode_value_ns == 0.0);
  CHECK(c.sim.engine.sync_gbps == 0.0);
  CHECK(c.sim.engine.jitter == 0.0);
  CHECK(c.sim.engine.remote_tls_message_us == 0.0);
  CHECK(c.sim.engine.remote_tls_gbps == 0.0);
  CHECK(c.sim.engine.remote_streamed_message_us == 0.0);
  CHECK(c.sim.engine.remote_tls_streamed_message_us == 0.0);
  CHECK(c.sim.engine.remote_gbps == 3.5);
  // Such a file priced TLS links at nothing: a run that asks for them is
  // refused, naming the file and the plain term it does have.
  const auto e = config_error({"--sim.calibration=" + path, "--sim.remote-tls=true"}, c);
  CHECK(e.find("sim.remote-tls-message-us, which is 0 while sim.remote-message-us is 40.5 "
               "(sim.calibration = " + path + ")") != std::string::npos);
}

TEST_CASE("a bad calibration file is refused, naming the file and the key") {
  const auto good = runtime::calibration_json(sample());
  auto refused = [](const std::string& path, const std::string& key) {
    runtime::train_config c;
    const auto err = config_error({"--sim.calibration=" + path}, c);
    INFO(err);
    CHECK(err.find(path) != std::string::npos);
    CHECK(err.find(key) != std::string::npos);
  };
  auto with = [&](const std::string& name, std::string from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    const auto path = scratch(name);
    write(path, text);
    return path;
  };
  refused(with("unknown.json", "\"gflops\"", "\"glops\""), "sim.glops");
  refused(with("type.json", "123.5", "\"fast\""), "sim.gflops");
  // A number past a double's range: refused naming the file, not thrown.
  refused(with("overflow.json", "123.5", "1.5e999"), "number overflow");
  refused(with("cores.json", "\"cores\": 4", "\"cores\": \"four\""), "machine.cores");
  refused(with("missing.json", "\"date\": \"2026-11-27T03:00:00Z\",", ""), "machine.date");
  refused(with("range.json", "\"core-contention\": 1.25", "\"core-contention\": 0.5"),
          "sim.core-contention");
  const auto cut = scratch("truncated.json");
  write(cut, good.substr(0, good.size() / 2));
  refused(cut, "not valid JSON");
  refused(scratch("absent.json"), "cannot open");
  runtime::train_config c;
  CHECK(config_error({"--sim.calibration=no-such-preset"}, c).find("no such preset") !=
        std::string::npos);
}

TEST_CASE("a constant on the command line wins over the calibration file") {
  const auto path = scratch("override.json");
  write(path, runtime::calibration_json(sample()));
  runtime::train_config c;
  REQUIRE(config_error({"--sim.calibration=" + path, "--sim.gflops=44",
                        "--sim.core-contention=2"}, c) == "");
  CHECK(c.sim.engine.gflops == 44);
  CHECK(c.sim.engine.core_contention == 2);
  CHECK(c.sim.engine.memory_gbps == 21.25); // the file's
  CHECK(c.sim.constants.find("sim.gflops from command line") != std::string::npos);
  // build_train_config alone (no apply_calibration) gives the same
  runtime::option_set o;
  runtime::add_train_options(o);
  REQUIRE_FALSE(o.parse({"--sim.calibration=" + path, "--sim.gflops=44"}));
  runtime::train_config d;
  REQUIRE_FALSE(runtime::build_train_config(o, d));
  CHECK(d.sim.engine.gflops == 44);
  CHECK(d.sim.engine.remote_message_us == 40.5);
}

TEST_CASE("a run with a calibration states its source; one without says built-in defaults") {
  const auto path = scratch("source.json");
  write(path, runtime::calibration_json(sample()));
  runtime::train_config c, plain;
  REQUIRE(config_error({"--sim.calibration=" + path}, c) == "");
  REQUIRE(config_error({}, plain) == "");
  CHECK(c.sim.calibrated);
  CHECK(c.sim.constants == path + " (Test CPU 9000, x86-64-v3, 4 cores, 2026-11-27)");
  CHECK_FALSE(plain.sim.calibrated);
  CHECK(plain.sim.constants == "built-in defaults");
  CHECK(plain.sim.engine.gflops == 44); // the defaults stay
  runtime::run_metrics m;
  m.sim = runtime::sim_metrics{};
  m.sim->constants = c.sim.constants;
  m.sim->calibrated = true;
  CHECK(runtime::summary(m).find("simulated on the virtual clock, constants: " + path +
                                 " (Test CPU 9000") != std::string::npos);
  CHECK(runtime::to_json(m).find("\"constants\":\"" + path) != std::string::npos);
  m.sim->constants = plain.sim.constants; // the defaults: not in the JSON (the oracle's bytes)
  m.sim->calibrated = false;
  CHECK(runtime::summary(m).find("constants: built-in defaults") != std::string::npos);
  CHECK(runtime::to_json(m).find("\"constants\"") == std::string::npos);
}

TEST_CASE("the shipped preset is found by its name") {
  runtime::train_config c;
  REQUIRE(config_error({"--sim.calibration=epyc-x86-64-v3-2core"}, c) == "");
  CHECK(c.sim.constants.rfind("config/calibrations/epyc-x86-64-v3-2core.json (", 0) == 0);
  runtime::calibration_record r;
  REQUIRE_FALSE(runtime::read_calibration(
    std::string(SS_SOURCE_DIR) + "/config/calibrations/epyc-x86-64-v3-2core.json", r));
  CHECK(c.sim.engine.gflops == r.sim.at("gflops"));
}

TEST_CASE("the effective INI of a calibrated run reproduces it; an uncalibrated one omits the key") {
  runtime::option_set plain;
  runtime::add_train_options(plain);
  REQUIRE_FALSE(plain.parse(std::vector<std::string>{}));
  CHECK(plain.effective_ini().find("calibration =") == std::string::npos);
  const auto path = scratch("saved.json");
  write(path, runtime::calibration_json(sample()));
  runtime::option_set o;
  runtime::add_train_options(o);
  REQUIRE_FALSE(o.parse({"--sim.calibration=" + path, "--sim.message-us=2"}));
  REQUIRE_FALSE(runtime::apply_calibration(o));
  CHECK(o.source("sim.gflops") == "calibration file '" + path + "'");
  const auto ini = o.effective_ini();
  CHECK(ini.find("calibration = \"" + path + "\"") != std::string::npos);
  write(path, "{}"); // the file changes later: the saved INI still has the constants
  runtime::option_set again;
  runtime::add_train_options(again);
  REQUIRE_FALSE(again.parse_text(ini, "saved.ini"));
  runtime::train_config c;
  const auto err = runtime::build_train_config(again, c);
  INFO(err.value_or(""));
  CHECK(err.value_or("").find("calibration file '" + path + "'") != std::string::npos);
  write(path, runtime::calibration_json(sample()));
  REQUIRE_FALSE(runtime::build_train_config(again, c));
  CHECK(c.sim.engine.gflops == 123.5);
  CHECK(c.sim.engine.message_us == 2);
}
