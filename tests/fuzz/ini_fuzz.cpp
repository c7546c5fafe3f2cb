// The INI/option parser of `train` (config/options.cpp, not CAF's): any text
// either parses or gives an error message; a parsed set either builds a
// train_config or names what is wrong. Never a crash or an exception.
#include <string>

#include "config/train_config.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  runtime::option_set opts;
  runtime::add_train_options(opts);
  if (auto err = opts.parse_text(text, "fuzz.ini")) {
    FUZZ_CHECK(!err->empty());
    return 0;
  }
  runtime::train_config cfg;
  if (auto err = runtime::build_train_config(opts, cfg))
    FUZZ_CHECK(!err->empty());
  // The effective configuration must parse back.
  runtime::option_set again;
  runtime::add_train_options(again);
  FUZZ_CHECK(!again.parse_text(opts.effective_ini(), "effective.ini"));
  return 0;
}
