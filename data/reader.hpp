#pragma once
// Streaming reader for delimited CTR files (Criteo TSV by default, any
// schema_options layout otherwise) into data::batch.
//
// Lines:
// - '\n' ends a line; a trailing '\r' is stripped (CRLF works). A last line
//   without newline is read. Lines may have fewer fields than the schema:
//   missing trailing fields are empty (see line_parser.hpp for field rules).
// - An empty line (nothing, or only "\r") followed later in the same file by
//   a non-empty line is malformed. Empty lines at the end of a file are
//   ignored: they are neither examples nor malformed.
// - Malformed lines (bad label, non-numeric dense field, too many fields,
//   empty line in the middle) are counted in stats::malformed; the first
//   max_logged_errors are kept as "FILE:LINE: what was wrong, what was
//   expected". Default: skip the line. strict: next() returns false and
//   error() holds that message. Lines are 1-based per file; a header is
//   line 1.
//
// Multi-hot columns (schema.multi_hot): batches carry bags (batch.hpp's
// cat_offsets); a bag longer than max_ids is cut and counted in
// stats::cut_bags, or, strict, is a malformed line; an empty id in a bag
// is a malformed line.
//
// Headers: with schema.header every file starts with its own header line;
// column names are resolved per file, so the column order may differ.
//
// Input: `files` entries are expanded first (folders, glob patterns, "-" for
// standard input; input_files.hpp states the order). The files are read one
// after another, with large reads into one reused buffer (chunk_bytes; it
// grows only for a longer line; see line_source.hpp). gzip and zstd files are
// decompressed on the fly, recognised by their first bytes (byte_stream.hpp);
// offsets, parts and stats::bytes count decompressed bytes. File sizes are
// taken at open(): bytes appended later are not read.
//
// Partitioning: the data bytes of all files (headers excluded) form one
// concatenated range, split by bytes into num_parts equal parts. Part i
// reads the lines whose first byte lies in its byte range: it starts at the
// first line beginning at or after its start and includes the line that
// straddles its end. Parts are therefore disjoint and together cover every
// line exactly once; a part may be empty. Files are never merged: every file
// starts a new line.
// With num_parts > 1, open() decompresses each compressed file once to learn
// its size, so its parts are those of the same file uncompressed, unless
// reader_options::known_sizes has the file's size already: many readers of
// the same files (one per trainer) measure them once, before they open, with
// measure_compressed_inputs (below); standard
// input cannot be split (open() refuses "-" with num_parts > 1) and is read
// once: reset() or a second reader on "-" fails in next() with a message.
//
// Errors are values: open() fails with a message naming the file; next()
// returns false with error() set on a fatal error (strict mode, I/O). No
// exceptions are thrown except std::bad_alloc.
//
// Thread safety: one reader per thread; distinct readers share nothing.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/batch.hpp"
#include "data/line_parser.hpp"
#include "data/line_source.hpp"
#include "data/schema.hpp"

namespace data {

// Whether lines carry the label column (schema.label).
// - required: every line does.
// - absent: no line does: the layout without its label column, the fields
//   after it one place to the left; examples get label 0.
// - either: a line with exactly one field fewer than the layout is read as
//   absent (Criteo's test file: the 39 feature columns), one with all fields
//   as required; other widths are malformed (too few fields). With a header
//   (schema.header), the header decides per file: a label named in it or not.
// Only predict reads lines without a label.
enum class label_presence { required, absent, either };

// The decompressed sizes of gzip and zstd input files, by path as expanded
// (input_files.hpp).
using input_sizes = std::map<std::string, std::uint64_t>;

struct reader_options {
  std::vector<std::string> files; // entries read in this order; at least one
  schema_options schema = schema_options::criteo();
  bool strict = false;               // stop at the first malformed line
  // A line with another number of fields than the schema stops the reader
  // (it is not skipped): predict and eval of a saved model never score a
  // file of another layout from shifted columns.
  bool whole_lines = false;
  label_presence labels = label_presence::required;
  std::size_t max_logged_errors = 5; // messages kept in stats::first_errors
  std::size_t part = 0;              // read part `part` of `num_parts` (0-based)
  std::size_t num_parts = 1;
  std::size_t chunk_bytes = std::size_t(1) << 20; // read size; tests use tiny ones
  // With num_parts > 1: a compressed file found here is not decompressed at
  // open() to learn its size; this size is used. Null or a file not in it:
  // measured at open().
  std::shared_ptr<const input_sizes> known_sizes;
};

// Expands `entries` (input_files.hpp) and decompresses every gzip or zstd
// file among them once, counting its bytes. Plain files and standard input
// are left out, and so is a file that cannot be expanded, opened or
// decompressed to its end: its reader's open() or next() reports it.
input_sizes measure_compressed_inputs(const std::vector<std::string>& entries);

class reader {
public:
  struct stats {
    std::uint64_t lines = 0;     // data lines consumed: examples + malformed
    std::uint64_t examples = 0;  // well-formed lines, returned in batches
    std::uint64_t unlabelled = 0; // of those, read without a label (label 0)
    std::uint64_t malformed = 0; // skipped (or, in strict mode, the fatal one)
    std::uint64_t bytes = 0;     // bytes of this part's lines (empty ones too), newlines included
    std::uint64_t cut_bags = 0;  // multi-hot bags cut to data.max-ids (not strict)
    std::string first_cut_bag;   // the first: "FILE:LINE: column C: a bag of N ids, ..."
    std::vector<std::string> first_errors; // at most max_logged_errors
    // What a log says of the cut bags ("" : none): "3 training bags over
    // data.max-ids; the first: FILE:LINE: ..."; `what` names the set.
    std::string cut_bags_note(const std::string& what) const;
  };

  // Checks the options, opens every file once (existence, size, header) and
  // resolves the schema per file. nullptr with *error set on failure, e.g.
  // "cannot open 'train.tsv': No such file or directory". error may be null.
  static std::unique_ptr<reader> open(const reader_options& options, std::string* error);

  ~reader();
  reader(const reader&) = delete;
  reader& operator=(const reader&) = delete;

  // Appends up to max_examples examples to `out` (out.size grows; call
  // out.clear() between batches to reuse its buffers). Sets out.num_dense and
  // out.num_cat from the schema; if `out` already holds examples they must
  // match. Returns true when it appended at least one example, false when
  // nothing is left or on a fatal error (check error()); in the error case
  // `out` keeps the examples read before the failing line.
  bool next(batch& out, std::size_t max_examples);

  // Starts another pass over the same part, e.g. for another epoch. Clears
  // the statistics and the error.
  void reset();

  // Non-empty after a fatal error.
  const std::string& error() const { return error_; }
  const stats& statistics() const { return stats_; }
  std::size_t num_dense() const { return num_dense_; }
  std::size_t num_cat() const { return num_cat_; }

private:
  struct input_file;
  explicit reader(reader_options options);

  bool open_file(); // next file with bytes in this part; false when done or failed
  void finish_file();
  bool fail(std::string message);
  // Counts a malformed line; returns false when that is fatal (strict).
  // Counts a malformed line; false (the reader's error set) when it ends
  // the read: strict, or `fatal`.
  bool malformed(std::uint64_t line_index, const std::string& message, bool fatal = false);
  bool flush_pending_blanks(); // the pending empty lines were followed by data
  std::uint64_t line_number(std::uint64_t line_index); // 0 if unknown

  reader_options options_;
  std::vector<input_file> files_;
  std::uint64_t part_begin_ = 0, part_end_ = 0; // global data offsets
  std::size_t num_dense_ = 0, num_cat_ = 0;
  stats stats_;
  std::string error_;
  bool done_ = false;

  // Current file.
  std::size_t file_ = 0;
  line_source source_;
  line_parser parser_;
  line_parser unlabelled_parser_; // lines without the label column
  bool file_unlabelled_ = false;  // every line of this file lacks it (absent, or its header)
  // labels == either: whether this file's lines carry the label is known (its
  // header, or its first well-formed line, decides for the whole file).
  bool file_layout_known_ = false;
  std::uint64_t stop_off_ = 0;   // lines starting at or after this belong to the next part
  std::uint64_t base_line_ = 0;  // line number of source_'s first line; 0 until needed
  std::uint64_t line_index_ = 0; // lines seen in this file since that first line
  std::uint64_t pending_blanks_ = 0;
  std::vector<std::uint64_t> pending_blank_index_; // the first few, for messages
  std::vector<std::uint64_t> single_; // [num_cat]: parse()'s output with multi-hot columns
};

} // namespace data
