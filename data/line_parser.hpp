#pragma once
// Parses one data line into one example, following a resolved_schema.
//
// Field rules:
// - Label: "0" or "1", or any decimal number exactly equal to 0 or 1 ("0.0",
//   "1.0", "1e0"). Anything else, including an empty or missing label, makes
//   the line malformed.
// - Dense: empty or missing -> 0.0f. Otherwise a finite decimal number as
//   std::from_chars reads it ("12", "-2", "12.0", "1e3"; a leading '+' is also
//   accepted; no blanks, no "inf"/"nan"), stored as
//   float(log1p(max(x, 0))) computed in double.
// - Categorical: hash_categorical(raw field text, categorical index); empty
//   or missing -> hash_categorical("", index).
// - Missing trailing fields are empty fields (unless require_all_fields).
//   More than num_columns fields makes the line malformed.
//
// The line must not contain the '\n' and the reader strips a trailing '\r'.
// Speed: a vectorised scan finds the delimiters first; the fields are then
// converted one after another with no dependency on the scan.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/schema.hpp"

namespace data {

struct line_error {
  enum kind_t { bad_label, bad_number, not_finite, too_many_fields, too_few_fields } kind = bad_label;
  std::size_t column = 0; // field index of the offending field
  std::string_view text;  // the offending field's text (points into the line)
  std::size_t fields = 0; // too_many_fields, too_few_fields: fields the line has
};

// Parses lines of one resolved_schema. Holds per-line scratch (the field
// boundaries), so parse() allocates nothing. The schema must outlive the
// parser. One parser per thread.
class line_parser {
public:
  explicit line_parser(const resolved_schema* schema = nullptr);

  // On success writes *label, dense[0..num_dense), cat[0..num_cat) and
  // returns true. On failure returns false, fills *error, and leaves the
  // outputs in an unspecified state. With a user column in the schema and
  // `user` set, also writes *user = hash_user(that field's raw text).
  bool parse(std::string_view line, float* label, float* dense, std::uint64_t* cat, line_error* error,
             std::uint64_t* user = nullptr);

  const resolved_schema& schema() const { return *schema_; }
  // true: a line with fewer fields than the schema is malformed
  // (too_few_fields) instead of ending in empty fields. A model that scores
  // data uses it: a file of another layout (Criteo's test set, without the
  // label column) must not be read from shifted columns.
  void require_all_fields(bool on) { all_fields_ = on; }

private:
  const resolved_schema* schema_;
  std::vector<const char*> ends_; // [num_columns]: where each field ends
  bool all_fields_ = false;
};

// "column I3: expected a number, got 'abc'" (no file:line prefix).
std::string describe(const resolved_schema& schema, const line_error& error);

// The dense transform alone: log1p(max(x, 0)) as float, computed in double.
float dense_transform(double x);

} // namespace data
