#pragma once
// Sequential mode: the whole model in one thread, no actors. It is the
// reference the actor cluster is compared against (quality and examples/s) and
// a fast single-process trainer on its own.
//
// Per mini-batch: read -> keys -> de-duplicate -> gather rows -> forward and
// backward -> dense optimiser on the flat buffer -> reduce embedding gradients
// per unique row -> sparse optimiser. All buffers are reused.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/manifest.hpp"
#include "model/dlrm.hpp"
#include "checkpoint/background_writer.hpp"
#include "data/batch.hpp"
#include "data/reader.hpp"
#include "model/collision_counter.hpp"
#include "model/dynamic_tables.hpp"
#include "model/embedding.hpp"
#include "model/metrics.hpp"
#include "report/progress.hpp"
#include "report/run_metrics.hpp"
#include "config/train_config.hpp"

namespace runtime {

class sequential_engine {
public:
  explicit sequential_engine(const train_config& cfg);

  // One run over cfg.data.train (train.epochs passes, train.max-examples cap).
  // Fills examples, seconds, train_ne, malformed_lines, cut_bags. Returns an error
  // message on a fatal input error (strict mode, I/O) or a failed checkpoint.
  // With checkpoint.dir it writes checkpoints (checkpoint.every-*) and one at
  // the end; after restore() it continues where the checkpoint was cut.
  std::optional<std::string> train(progress_reporter& progress, run_metrics& out);

  // Evaluates the current model on `files`; fills eval, eval_seconds,
  // eval_malformed_lines, eval_cut_bags.
  std::optional<std::string> evaluate(const std::vector<std::string>& files, run_metrics& out);

  // One training step on one batch (also the unit the engine benchmark
  // times). Adds the batch's pre-update loss/predictions to `ne`.
  void train_step(const data::batch& b, model::ne_accumulator& ne);

  // Checkpoints (engine/sequential_checkpoint.cpp). restore() loads the
  // model, optimiser state, reader position and counters of a checkpoint
  // folder or dir; the next train() resumes exactly there (the same batches,
  // the same bits as an uninterrupted run). save() writes one checkpoint
  // into `dir` at the current state; `m` carries the position.
  std::optional<std::string> restore(const std::string& path);
  std::optional<std::string> save(const std::string& dir, std::size_t keep, checkpoint::manifest m);

  const model::dlrm& net() const { return net_; }
  const model::float_buffer& params() const { return params_; }
  // Read/write access for diagnostics (bench/trace_engine.cpp): the flat dense
  // parameters and the embedding tables.
  model::float_buffer& mutable_params() { return params_; }
  model::embedding_tables& tables() { return tables_; }
  const model::embedding_tables& tables() const { return tables_; }
  // model.embedding=dynamic: the dynamic tables (tables() then holds one
  // unused row per table); nullptr with hashed tables.
  const model::dynamic_tables* dynamic_tables() const { return dynamic_.get(); }

private:
  train_config cfg_;
  model::dlrm net_;
  model::float_buffer params_, dense_acc_, grads_;
  model::embedding_tables tables_;
  std::unique_ptr<model::dynamic_tables> dynamic_; // model.embedding=dynamic
  std::unique_ptr<model::collision_counter> collisions_; // embedding.collisions
  std::uint64_t trained_ = 0; // examples trained so far: the dynamic tables' clock
  void fill_embedding_metrics(run_metrics& out) const;
  model::batch_lookup rows_;
  model::workspace ws_;
  model::float_buffer grad_unique_;
  // The checkpoint being written (checkpoint/background_writer.hpp): started
  // at a cut, finished (joined, its error returned) before the next one.
  std::unique_ptr<checkpoint::background_writer> bg_;
  std::optional<std::string> start_checkpoint(const std::string& dir, std::size_t keep,
                                              checkpoint::manifest m);
  std::optional<std::string> finish_checkpoint();
  std::optional<std::string> save_dynamic(const std::string& dir, std::size_t keep,
                                          checkpoint::manifest m);
  // Malformed lines skipped and multi-hot bags cut to data.max-ids.
  struct input_counts {
    std::uint64_t malformed = 0, cut_bags = 0;
    void add(const data::reader::stats& pass) {
      malformed += pass.malformed;
      cut_bags += pass.cut_bags;
    }
  };
  // Where train() starts: zero, or what restore() read.
  struct start_point {
    checkpoint::reader_position reader;
    std::uint64_t examples = 0;
    model::ne_accumulator ne;
    input_counts before; // all passes before reader.epoch
    double seconds = 0;
  } start_;
  // The manifest of a cut inside pass `epoch` after `pass_examples` of it
  // (`pass` its reader: lines read, malformed lines and cut bags so far), or
  // at a pass's end (`pass` null); `before` counts the passes before it.
  checkpoint::manifest manifest_at(std::uint64_t epoch, std::uint64_t pass_examples,
                                   const data::reader* pass, std::uint64_t examples,
                                   const model::ne_accumulator& ne, const input_counts& before,
                                   double seconds) const;
};

} // namespace runtime
