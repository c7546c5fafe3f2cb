#pragma once
// reader: serves one trainer's part of the input as mini-batches, one per
// request (data::reader does the parsing and hashing; see data/reader.hpp).
//
// Protocol (reader_actor in interfaces.hpp):
// - next -> example_batch: the next batch of up to batch_size examples, seq
//   0, 1, 2, ... with num_dense / num_cat from the schema; labels [size],
//   dense [size * num_dense], cat [size * num_cat] (example-major, as
//   data::batch). Only the last batch may be short. At the end of the data
//   the reply is an EMPTY batch (size 0, seq = number of batches served), and
//   every later next gets one too.
// - The end comes after `epochs` passes over the part (a batch may span two
//   passes), or after exactly max_examples examples (the batch that reaches it
//   is trimmed), whichever is first. max_examples 0 means no limit.
// - Failures reply errc::input_error with the reader's message, which names
//   the file (and line, for a malformed line in strict mode), e.g.
//   "train.tsv:2: column label: expected a label 0 or 1, got '2'". A failure
//   is final: every later next gets the same error, and the examples read
//   before the failing line in that batch are not served. batch_size 0 or
//   epochs 0 is errc::bad_request ("reader config: ...").
//
// The files are opened at the first next (not at spawn). Malformed lines that
// are skipped (non-strict mode) are counted; at the end of the first pass the
// reader's first errors are logged with spdlog::warn, and with the first
// empty batch a summary (examples, batches, malformed lines) is logged. The
// end batch carries the malformed lines and the bags cut to data.max-ids of
// all passes (the workers report them).
//
// Each next reads one batch synchronously from disk (one batch per message).
//
// where -> reader_mark: passes done, examples and lines consumed in this
// pass, malformed lines and cut bags of earlier passes, examples served. A reader started
// with cfg.resume = such a mark continues from it: at the first next it
// re-reads the pass's first `examples` examples and drops them (O(position):
// no byte seek), so the same data gives the same batches from there on.
#include <cstdint>
#include <atomic>
#include <memory>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/interfaces.hpp"
#include "data/batch.hpp"
#include "data/reader.hpp"

namespace actors {

struct reader_config {
  data::reader_options options; // files, schema, strict, part / num_parts
  std::size_t batch_size = 128; // examples per batch
  std::uint64_t max_examples = 0; // 0 = all
  // A trainer whose share of train.max-examples is 0 reads nothing (the
  // first next is the end), rather than all: see cluster_plan.cpp.
  bool read_none = false;
  std::size_t epochs = 1;         // passes over the part
  // Resume from a checkpoint cut: passes already done (epoch), examples of
  // the current pass to skip (re-read and dropped at the first next),
  // malformed lines of earlier passes, examples served in all of them.
  messages::reader_mark resume;
  // Optional: the bytes of lines read so far, all passes, mirrored here as
  // they grow (the progress line's share done).
  std::shared_ptr<std::atomic<std::uint64_t>> bytes_read;
};

struct reader_state {
  static inline const char* name = "reader";

  reader_config cfg;
  std::unique_ptr<data::reader> input; // opened at the first next
  data::batch buffer;                  // reused between batches
  std::uint64_t seq = 0;               // batches served
  std::uint64_t served = 0;            // examples served
  std::uint64_t malformed = 0;         // skipped lines, all passes so far
  std::uint64_t cut_bags = 0;          // bags cut to data.max-ids, all passes so far
  std::size_t passes = 0;              // completed passes
  std::uint64_t passes_bytes = 0;      // bytes read in the completed passes
  bool finished = false;               // the end was reached
  bool end_served = false;             // an empty batch was replied
  caf::error failure;                  // final error, replied to every next

  // "reader-P" (P = options.part), for logs and error messages.
  std::string who() const;
  // The next batch (empty at the end), or the failure.
  caf::expected<messages::example_batch> next();
  // Where the reader is: what a resumed reader skips to.
  messages::reader_mark where() const;

private:
  caf::error open(); // and skips to cfg.resume
  // Adds the current pass's malformed lines and cut bags; logs its first
  // errors and cut bags (pass 0).
  void count_pass();
  // At the end of a pass: counts it and resets for another one. Returns false
  // when no pass is left.
  bool end_pass();
  // The end of the data; mid_pass: stopped by max_examples inside a pass.
  void finish(bool mid_pass);
  void log_end(); // the summary, when the first empty batch goes out
  messages::example_batch take_batch();
};

reader_actor::behavior_type reader(reader_actor::stateful_pointer<reader_state> self,
                                   reader_config cfg);

} // namespace actors
