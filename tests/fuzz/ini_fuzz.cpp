// The INI/option parser of `train` and of a multi-node spec
// (config/options.cpp, not CAF's): any text either parses or gives an error
// message; a parsed set either builds a train_config or names what is wrong,
// and its [deploy] section (config/deploy_config.hpp) either gives the
// launcher's spec and role overrides or names what is wrong. Never a crash or
// an exception.
// An input that starts with '{' is a calibration file (sim.calibration,
// config/calibration_file.hpp) instead: it is read, or refused with an error
// naming the file; a file read is written back as the same record, and
// applied to the options (sim.calibration=FILE) it sets every constant or
// names the key out of range.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "config/calibration_file.hpp"
#include "config/deploy_config.hpp"
#include "config/train_config.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

const std::string& calibration_path() {
  static const std::string p = "/tmp/ss-fuzz-calibration-" + std::to_string(::getpid()) + ".json";
  return p;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

void calibration_file(const std::string& text) {
  const auto& path = calibration_path();
  write_text(path, text);
  runtime::calibration_record r;
  if (auto err = runtime::read_calibration(path, r)) {
    FUZZ_CHECK(err->find(path) != std::string::npos);
    return;
  }
  // What was read is what calibrate would write for it.
  write_text(path, runtime::calibration_json(r));
  runtime::calibration_record again;
  FUZZ_CHECK(!runtime::read_calibration(path, again));
  FUZZ_CHECK(again.cpu == r.cpu && again.isa == r.isa && again.cores == r.cores &&
             again.note == r.note && again.sim == r.sim); // (JSON has no NaN)
  runtime::option_set opts;
  runtime::add_train_options(opts);
  FUZZ_CHECK(!opts.parse_text("[sim]\ncalibration = " + path + "\n", "fuzz.ini"));
  if (auto err = runtime::apply_calibration(opts))
    FUZZ_CHECK(err->find(path) != std::string::npos);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!text.empty() && text[0] == '{') {
    calibration_file(text);
    std::remove(calibration_path().c_str()); // nothing left behind in /tmp
    return 0;
  }
  runtime::option_set opts;
  runtime::add_train_options(opts);
  runtime::add_deploy_options(opts);
  if (auto err = opts.parse_text(text, "fuzz.ini")) {
    FUZZ_CHECK(!err->empty());
    return 0;
  }
  runtime::train_config cfg;
  if (auto err = runtime::build_train_config(opts, cfg))
    FUZZ_CHECK(!err->empty());
  std::vector<std::string> extra;
  if (auto err = runtime::deploy_overrides(opts, extra))
    FUZZ_CHECK(!err->empty());
  runtime::deploy_settings spec;
  if (auto err = runtime::build_deploy(opts, "", spec))
    FUZZ_CHECK(!err->empty());
  // The effective configuration must parse back.
  runtime::option_set again;
  runtime::add_train_options(again);
  runtime::add_deploy_options(again);
  FUZZ_CHECK(!again.parse_text(opts.effective_ini(), "effective.ini"));
  return 0;
}
