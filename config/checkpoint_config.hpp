#pragma once
// [checkpoint] options of `train` and output.model (DESIGN.md section 9):
//   checkpoint.dir             checkpoint folders go here (store.hpp layout)
//   checkpoint.every-examples  a checkpoint after every N training examples
//   checkpoint.every-seconds   ... and/or every S seconds of training
//   checkpoint.keep            the newest K checkpoints are kept
//   checkpoint.resume          continue from a checkpoint folder or dir
//                              (`train --resume=PATH` is the same)
//   checkpoint.new-data        resume onto other training files, read from
//                              their beginning (default: refused)
//   output.model               the final model, as a checkpoint dir
// With checkpoint.dir set, one more checkpoint is written at the end.
#include <cstdint>
#include <optional>
#include <string>

#include "config/modes.hpp"
#include "config/options.hpp"

namespace runtime {

struct checkpoint_settings {
  std::string dir;                  // empty: no checkpoints
  std::uint64_t every_examples = 0; // 0: not by examples
  double every_seconds = 0;         // 0: not by time
  std::size_t keep = 3;
  bool background = true;           // write beside training (copy-on-write rows)
  std::string resume;               // empty: a fresh start
  bool new_data = false;            // checkpoint.new-data: other files, from their start
  std::string model_out;            // output.model; empty: none
  std::string effective_ini;        // the run's configuration, for manifests
  bool enabled() const { return !dir.empty(); }
};

void add_checkpoint_options(option_set& o);

// Reads the options; errors name the key. `mode` is cluster.mode.
std::optional<std::string> build_checkpoint_settings(const option_set& o, cluster_mode mode,
                                                     checkpoint_settings& out);

} // namespace runtime
