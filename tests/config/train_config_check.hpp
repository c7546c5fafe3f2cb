#pragma once
// What `shadowsync train` makes of a command line (tools/train_command.cpp):
// the options parsed, a calibration file applied (sim.calibration), the
// typed configuration built. The config tests' one way to ask.
#include <string>
#include <vector>

#include "config/calibration_file.hpp"
#include "config/train_config.hpp"

namespace test {

// The first error of `args`, or "" with the configuration in `out`.
inline std::string train_config_error(const std::vector<std::string>& args,
                                      runtime::train_config& out) {
  runtime::option_set o;
  runtime::add_train_options(o);
  if (auto e = o.parse(args))
    return *e;
  if (auto e = runtime::apply_calibration(o))
    return *e;
  return runtime::build_train_config(o, out).value_or("");
}

// The same, the configuration through a pointer (the options tests' `parse`).
inline std::string parse(const std::vector<std::string>& args, runtime::train_config* out) {
  return train_config_error(args, *out);
}

} // namespace test
