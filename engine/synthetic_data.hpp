#pragma once
// The default data of `train`: a synthetic train set and eval set sharing one
// teacher, generated under data.synthetic-dir and reused by later runs when
// their .meta.json says they were made with the same options.
#include <optional>
#include <string>

#include "config/train_config.hpp"

namespace runtime {

struct synthetic_paths {
  std::string train, eval;
};

// Generates (or reuses) the files. Returns an error message on I/O failure.
std::optional<std::string> ensure_synthetic(const data_settings& d, synthetic_paths& out);

} // namespace runtime
