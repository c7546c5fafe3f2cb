// sim.calibration = this-machine (config/kept_calibration.hpp): where this
// machine's calibration is kept, that a virtual-clock run reads it from
// there and names it, that a missing one is an error naming the path, and
// that runs without the virtual clock do not ask for one.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unistd.h>

#include "config/calibration_file.hpp"
#include "config/kept_calibration.hpp"
#include "tests/config/train_config_check.hpp"

namespace {

namespace fs = std::filesystem;

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

fs::path scratch() {
  const auto dir = fs::temp_directory_path() / ("ss-kept-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const std::vector<std::string> small_run = {"--cluster.mode=simulated", "--sim.clock=virtual",
                                            "--sim.calibration=this-machine"};

} // namespace

TEST_CASE("this machine's calibration is kept under SHADOWSYNC_STATE_DIR, XDG_STATE_HOME or HOME") {
  const auto key = runtime::this_machine_key();
  CHECK(key.find(runtime::build_isa_level()) != std::string::npos);
  CHECK(key.size() > 5);
  CHECK(key.compare(key.size() - 4, 4, "core") == 0);
  for (char c : key)
    CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'));
  const std::string file = "/calibrations/" + key + ".json";
  {
    scoped_env a("SHADOWSYNC_STATE_DIR", "/s"), b("XDG_STATE_HOME", "/x"), c("HOME", "/h");
    CHECK(runtime::kept_calibration_path() == "/s" + file);
  }
  {
    scoped_env a("SHADOWSYNC_STATE_DIR", std::nullopt), b("XDG_STATE_HOME", "/x"), c("HOME", "/h");
    CHECK(runtime::kept_calibration_path() == "/x/shadowsync" + file);
  }
  {
    scoped_env a("SHADOWSYNC_STATE_DIR", std::nullopt), b("XDG_STATE_HOME", std::nullopt),
      c("HOME", "/h");
    CHECK(runtime::kept_calibration_path() == "/h/.local/state/shadowsync" + file);
  }
  {
    scoped_env a("SHADOWSYNC_STATE_DIR", std::nullopt), b("XDG_STATE_HOME", std::nullopt),
      c("HOME", std::nullopt);
    CHECK(runtime::kept_calibration_path().empty());
    runtime::train_config cfg;
    const auto e = test::train_config_error(small_run, cfg);
    CHECK(e.find("no place to keep a calibration") != std::string::npos);
  }
}

TEST_CASE("a virtual-clock run reads this machine's kept calibration and names it") {
  const auto dir = scratch();
  scoped_env env("SHADOWSYNC_STATE_DIR", dir.string());
  const auto path = runtime::kept_calibration_path();
  runtime::train_config cfg;
  // None kept yet: an error naming where it would be (train measures it
  // before this point, tools/calibration_record.hpp).
  const auto missing = test::train_config_error(small_run, cfg);
  CHECK(missing.find("no calibration of this machine is kept at " + path) != std::string::npos);
  // Runs without the virtual clock have no use for it.
  for (const auto& other : {"--cluster.mode=sequential", "--sim.clock=wall"}) {
    const std::vector<std::string> args = {other, "--sim.calibration=this-machine"};
    runtime::train_config c;
    CHECK(test::train_config_error(args, c) == "");
    CHECK(c.sim.constants == "built-in defaults");
    CHECK_FALSE(c.sim.calibrated);
  }
  runtime::calibration_record r;
  r.cpu = runtime::cpu_model_name();
  r.isa = runtime::build_isa_level();
  r.cores = 2;
  r.date = "2026-11-27T21:00:00Z";
  r.command = "test";
  for (const auto& k : runtime::calibration_keys())
    r.sim[k] = 3.5;
  r.sim["gflops"] = 77.25;
  r.sim["jitter"] = 0.25; // (at most 0.9)
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << runtime::calibration_json(r);
  REQUIRE(test::train_config_error(small_run, cfg) == "");
  CHECK(cfg.sim.calibrated);
  CHECK(cfg.sim.engine.gflops == 77.25);
  CHECK(cfg.sim.constants.rfind(path + " (" + r.cpu, 0) == 0);
  // A constant on the command line still wins over the kept file.
  auto args = small_run;
  args.push_back("--sim.gflops=12");
  REQUIRE(test::train_config_error(args, cfg) == "");
  CHECK(cfg.sim.engine.gflops == 12);
  fs::remove_all(dir);
}
