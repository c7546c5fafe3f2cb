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
  enum kind_t { bad_label, bad_number, not_finite, too_many_fields, too_few_fields, empty_id, long_bag } kind = bad_label;
  std::size_t column = 0; // field index of the offending field
  std::string_view text;  // the offending field's text (points into the line)
  std::size_t fields = 0; // too_many_fields, too_few_fields: fields the line has;
                          // long_bag: ids in the bag
};

// Bags cut to the schema's max_ids by append_bags().
struct bag_cuts {
  std::size_t bags = 0;   // bags of this line that were cut
  std::size_t column = 0; // field index of the first one
  std::size_t ids = 0;    // its ids before the cut
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

  // Schemas with multi-hot columns, after a successful parse() of the same
  // line (it reads that parse's field boundaries): appends the line's
  // categorical ids in slot order to *ids and, per slot, the end of its
  // range to *offsets. A single-hot slot appends cat[slot] (parse()'s
  // output); a multi-hot slot splits its field on the schema's id_delimiter
  // and appends hash_categorical(id, slot) per id (a bag of one id thus
  // hashes as the single-hot field would; an empty field is an empty bag).
  // Ids past max_ids are left out and counted in *cuts. An empty id ("a||b",
  // "a|") makes the line malformed (empty_id): false, *error set, and *ids
  // and *offsets may hold part of the line (the caller trims them).
  bool append_bags(const std::uint64_t* cat, std::vector<std::uint64_t>* ids, std::vector<std::uint32_t>* offsets,
                   bag_cuts* cuts, line_error* error) const;

  const resolved_schema& schema() const { return *schema_; }
  // true: a line with fewer fields than the schema is malformed
  // (too_few_fields) instead of ending in empty fields. A model that scores
  // data uses it: a file of another layout (Criteo's test set, without the
  // label column) must not be read from shifted columns.
  void require_all_fields(bool on) { all_fields_ = on; }

private:
  const resolved_schema* schema_;
  std::vector<const char*> ends_; // [num_columns]: where each field ends
  const char* line_begin_ = nullptr; // of the last parse()
  std::size_t fields_ = 0;           // fields of the last parse()'s line
  std::vector<std::size_t> slot_column_; // [num_cat]: field index of each categorical slot
  bool all_fields_ = false;
};

// "column I3: expected a number, got 'abc'" (no file:line prefix).
std::string describe(const resolved_schema& schema, const line_error& error);

// The dense transform alone: log1p(max(x, 0)) as float, computed in double.
float dense_transform(double x);

} // namespace data
