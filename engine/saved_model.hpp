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
#include <vector>

#include "model/dlrm.hpp"
#include "model/embedding.hpp"
#include "config/train_config.hpp"
#include "model/dynamic_tables.hpp"

namespace checkpoint {
struct opened_checkpoint;
}

namespace runtime {

struct saved_model {
  std::string folder;        // the checkpoint folder read
  std::uint64_t examples = 0; // examples it was trained on
  std::uint64_t bytes = 0;    // size of its files
  train_config cfg;          // its training configuration; data files cleared
  std::unique_ptr<model::dlrm> net;
  model::float_buffer params;
  std::unique_ptr<model::embedding_tables> tables; // hashed (model.embedding=hashed)
  std::unique_ptr<model::dynamic_tables> dynamic;  // model.embedding=dynamic (tables: null)
};

std::optional<std::string> load_saved_model(const std::string& path, saved_model& out);

// The training configuration checkpoint c was written with: its manifest's
// effective INI, without the keys that name the run's files.
std::optional<std::string> load_saved_config(const checkpoint::opened_checkpoint& c,
                                             train_config& out);

// What a run resumed from a checkpoint trains with differently from the run
// that wrote it, one line per setting, e.g. "train.dense-lr 0.03 -> 0.005":
// the optimisers, their learning rates, Adagrad's epsilon, the batch size.
std::vector<std::string> training_changes(const train_config& saved, const train_config& now);

// Before a resume from `path`: logs a warning per training_changes between
// the checkpoint's run and `now` (a resume takes its settings from its own
// command line, not from the checkpoint), or that the checkpoint's
// configuration cannot be read for the comparison. Says nothing when the
// checkpoint cannot be opened: the resume itself reports that.
void warn_training_changes(const std::string& path, const train_config& now);

// Before a resume (checkpoint.resume set): an error when this run's
// data.train (as given, before the synthetic default is filled in) names
// other files than the checkpoint's run did, unless checkpoint.new-data is
// set (then logged: the new files are read from their beginning).
std::optional<std::string> check_resume_data(const train_config& now);

} // namespace runtime
