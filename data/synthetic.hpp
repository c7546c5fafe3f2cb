#pragma once
// Synthetic Criteo-shaped data with a planted teacher (DESIGN.md section 4):
// the default data of the project, so a first run needs no download.
//
// A generated file is Criteo Kaggle TSV, read by the Criteo reader
// unchanged: `label \t I1..I13 \t C1..C26 \n`, 40 fields, label 0 or 1,
// dense counts as decimal integers (I2 may be -1 or -2), categorical values
// as 8 lowercase hex digits, empty fields for missing values. Beside it,
// PATH.meta.json (meta.hpp) records the options and the Bayes-optimal
// logloss and NE of the file, computed from the teacher's true probabilities.
//
// Row i of a file is the i-th draw of synthetic_stream, so tests (and
// anyone else) can regenerate every example and its true probability.
#include "data/example_sampler.hpp"
#include "data/meta.hpp"
#include "data/synthetic_options.hpp"
#include "data/teacher.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace data {

// The sample stream of a file: examples from example_sampler, true logits
// from the teacher, labels ~ Bernoulli(sigmoid(logit)), all driven by one
// engine seeded from options.seed. Not thread-safe.
class synthetic_stream {
public:
  // `t` must outlive the stream and be built from options with the same
  // teacher_seed and world options. Precondition: validate(options).empty().
  synthetic_stream(const synthetic_options& options, const teacher& t);

  // Draws the next row: the example, its true logit and its label (0 or 1).
  void next(synthetic_example* x, double* logit, int* label);

private:
  const teacher& teacher_;
  example_sampler sampler_;
  split_mix64 rng_;
};

// Most bytes format_synthetic_line writes: label, 13 tab+int64 (at most 20
// characters), 26 tab+8 hex digits, newline.
inline constexpr std::size_t synthetic_max_line_bytes = 1 + 13 * 21 + 26 * 9 + 1;
// Most bytes a line of these options takes: synthetic_max_line_bytes plus
// 9 per id ('|' and 8 hex digits) of the largest bag of each multi-hot column.
std::size_t synthetic_line_bytes(const synthetic_options& options);

// Writes one TSV line, newline included, at `out` (room for
// synthetic_line_bytes) and returns one past its last byte. A multi-hot
// column's ids are written as their text joined by '|'.
char* format_synthetic_line(const synthetic_example& x, int label, char* out);

// The 8 lowercase hex digits written for value id `id` of categorical column
// `column` (0-based): a bijection of the id within each column, and keyed by
// the column so equal ids in different columns give different strings.
void categorical_text(std::size_t column, std::uint32_t id, char out[8]);

struct generate_result {
  synthetic_meta meta; // also written to out_path + ".meta.json"
  double seconds = 0;  // wall time of generation and writing
};

// Writes options.rows rows to out_path (replacing it) and the sidecar to
// meta_path_for(out_path). `progress`, when set, is called with the rows
// written so far every 65536 rows and once at the end. Returns false and
// sets *error (when non-null) on invalid options or an I/O failure; the
// message names the option or the path. `out` may be null.
bool generate_synthetic(const synthetic_options& options, const std::string& out_path, generate_result* out,
                        std::string* error, const std::function<void(std::uint64_t rows_done)>& progress = {});

} // namespace data
