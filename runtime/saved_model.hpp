#pragma once
// A trained model read back from a checkpoint (output.model or a
// checkpoint.dir), for `predict` and `eval`: the configuration it was trained
// with (data layout, hashing, architecture), its embedding tables and its
// dense parameters (the average of the replicas when there are several).
// Every file is verified (open_checkpoint, CRC32C while reading); errors name
// the file at fault.
#include <memory>
#include <optional>
#include <string>

#include "model/dlrm.hpp"
#include "model/embedding.hpp"
#include "runtime/train_config.hpp"

namespace runtime {

struct saved_model {
  std::string folder;        // the checkpoint folder read
  std::uint64_t examples = 0; // examples it was trained on
  std::uint64_t bytes = 0;    // size of its files
  train_config cfg;          // its training configuration; data files cleared
  std::unique_ptr<model::dlrm> net;
  model::float_buffer params;
  std::unique_ptr<model::embedding_tables> tables;
};

std::optional<std::string> load_saved_model(const std::string& path, saved_model& out);

} // namespace runtime
