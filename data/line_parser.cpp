#include "data/line_parser.hpp"
#include "data/printable.hpp"

#include <algorithm>
#include <cmath>

#include "data/field_scan.hpp"
#include "data/hashing.hpp"

namespace data {

using field_scan::find_delimiters;
using field_scan::number;
using field_scan::parse_double;

float dense_transform(double x) {
  return static_cast<float>(std::log1p(x > 0.0 ? x : 0.0));
}

namespace {

// Most Criteo counts are small: a table of the exact same transform saves a
// log1p call (~20 ns) per dense field.
constexpr std::size_t table_size = 4096;
struct log1p_table {
  float v[table_size];
  log1p_table() {
    for (std::size_t i = 0; i < table_size; ++i)
      v[i] = dense_transform(static_cast<double>(i));
  }
};
const log1p_table small_log1p;

} // namespace

line_parser::line_parser(const resolved_schema* schema) : schema_(schema) {
  if (schema_) {
    ends_.resize(schema_->num_columns + 1);
    slot_column_.resize(schema_->num_cat);
    for (std::size_t col = 0; col < schema_->roles.size(); ++col)
      if (schema_->roles[col].kind == column_kind::categorical)
        slot_column_[schema_->roles[col].slot] = col;
  }
}

bool line_parser::append_bags(const std::uint64_t* cat, std::vector<std::uint64_t>* ids,
                              std::vector<std::uint32_t>* offsets, bag_cuts* cuts, line_error* error) const {
  const resolved_schema& schema = *schema_;
  const char d = schema.id_delimiter;
  for (std::size_t slot = 0; slot < schema.num_cat; ++slot) {
    if (!schema.multi_hot[slot]) {
      ids->push_back(cat[slot]);
      offsets->push_back(static_cast<std::uint32_t>(ids->size()));
      continue;
    }
    const std::size_t col = slot_column_[slot];
    if (col < fields_) { // a field the line does not have is an empty bag
      const char* const fb = col == 0 ? line_begin_ : ends_[col - 1] + 1;
      const char* const fe = ends_[col];
      const char* p = fb;
      if (p != fe) {
        std::size_t n = 0;
        for (const char* q = p;; ++q) {
          if (q == fe || *q == d) {
            if (q == p) {
              error->kind = line_error::empty_id;
              error->column = col;
              error->text = std::string_view(fb, static_cast<std::size_t>(fe - fb));
              return false;
            }
            if (n < schema.max_ids)
              ids->push_back(hash_categorical(std::string_view(p, static_cast<std::size_t>(q - p)), slot));
            ++n;
            p = q + 1;
            if (q == fe)
              break;
          }
        }
        if (n > schema.max_ids) {
          if (cuts->bags++ == 0) {
            cuts->column = col;
            cuts->ids = n;
          }
        }
      }
    }
    offsets->push_back(static_cast<std::uint32_t>(ids->size()));
  }
  return true;
}

bool line_parser::parse(std::string_view line, float* label, float* dense, std::uint64_t* cat,
                        line_error* error, std::uint64_t* user) {
  const resolved_schema& schema = *schema_;
  const char d = schema.delimiter;
  const char* const b = line.data();
  const char* const e = b + line.size();
  const std::size_t ncol = schema.num_columns;
  // Field k spans [previous end + 1, ends_[k]); the last field ends at e.
  const std::size_t delimiters = find_delimiters(b, e, d, ends_.data(), ncol);
  if (delimiters >= ncol) {
    error->kind = line_error::too_many_fields;
    error->column = ncol;
    error->fields = static_cast<std::size_t>(std::count(b, e, d)) + 1;
    return false;
  }
  const std::size_t nfields = delimiters + 1;
  if (all_fields_ && nfields < ncol) {
    error->kind = line_error::too_few_fields;
    error->column = nfields;
    error->fields = nfields;
    return false;
  }
  ends_[delimiters] = e;
  line_begin_ = b;
  fields_ = nfields;
  const column_role* roles = schema.roles.data();
  const char* p = b;
  for (std::size_t col = 0; col < nfields; ++col) {
    const char* const fe = ends_[col];
    const column_role role = roles[col];
    switch (role.kind) {
    case column_kind::categorical:
      // Criteo values are 8 hex digits: with the length a constant the hash
      // loop unrolls into branch-free code, and the hashes of consecutive
      // fields overlap in the CPU instead of waiting on loop-exit branches.
      cat[role.slot] = fe - p == 8 ? hash_categorical(std::string_view(p, 8), role.slot)
                                   : hash_categorical(std::string_view(p, static_cast<std::size_t>(fe - p)), role.slot);
      break;
    case column_kind::dense: {
      // Fast path: an optional '-' and up to 18 digits (no overflow).
      const char* q = p;
      const bool negative = q != fe && *q == '-';
      q += negative;
      const char* const digits = q;
      std::uint64_t v = 0;
      for (; q != fe; ++q) {
        const unsigned digit = static_cast<unsigned>(static_cast<unsigned char>(*q)) - '0';
        if (digit > 9)
          break;
        v = v * 10 + digit;
      }
      const std::ptrdiff_t n = q - digits;
      if (q == fe && n > 0 && n <= 18) {
        dense[role.slot] = negative ? 0.0f
                           : v < table_size ? small_log1p.v[v]
                                            : dense_transform(static_cast<double>(v));
      } else if (p == fe) {
        dense[role.slot] = 0.0f; // empty field: missing
      } else {
        double x = 0;
        const number parsed = parse_double(p, fe, &x);
        if (parsed != number::ok) {
          error->kind = parsed == number::not_finite ? line_error::not_finite : line_error::bad_number;
          error->column = col;
          error->text = std::string_view(p, static_cast<std::size_t>(fe - p));
          return false;
        }
        dense[role.slot] = dense_transform(x);
      }
      break;
    }
    case column_kind::label: {
      double x = -1;
      if (fe - p == 1 && (*p == '0' || *p == '1'))
        x = *p - '0';
      else if (parse_double(p, fe, &x) != number::ok || (x != 0.0 && x != 1.0))
        x = -1;
      if (x < 0) {
        error->kind = line_error::bad_label;
        error->column = col;
        error->text = std::string_view(p, static_cast<std::size_t>(fe - p));
        return false;
      }
      *label = static_cast<float>(x);
      break;
    }
    default:
      break;
    }
    p = fe + 1;
  }
  // Fields the line does not have are empty.
  for (std::size_t col = nfields; col < ncol; ++col) {
    const column_role role = roles[col];
    switch (role.kind) {
    case column_kind::categorical:
      cat[role.slot] = schema.missing_hash[role.slot];
      break;
    case column_kind::dense:
      dense[role.slot] = 0.0f;
      break;
    case column_kind::label:
      error->kind = line_error::bad_label;
      error->column = col;
      error->text = std::string_view();
      return false;
    default:
      break;
    }
  }
  if (user != nullptr && schema.user_column != resolved_schema::no_user) {
    // Outside the field loop: a run without data.user pays nothing.
    const std::size_t u = schema.user_column;
    std::string_view text; // a field the line does not have is empty
    if (u < nfields) {
      const char* begin = u == 0 ? b : ends_[u - 1] + 1;
      text = std::string_view(begin, static_cast<std::size_t>(ends_[u] - begin));
    }
    *user = hash_user(text);
  }
  return true;
}

std::string describe(const resolved_schema& schema, const line_error& error) {
  constexpr std::size_t max_shown = 40;
  // Shown escaped: a data file's bytes never reach a terminal raw.
  std::string got = printable(error.text.substr(0, max_shown));
  if (error.text.size() > max_shown)
    got += "...";
  const std::string column =
      "column " + (error.column < schema.names.size() ? printable(schema.names[error.column])
                                                       : std::to_string(error.column));
  switch (error.kind) {
  case line_error::bad_label:
    return column + ": expected a label 0 or 1, got '" + got + "'";
  case line_error::bad_number:
    return column + ": expected a number, got '" + got + "'";
  case line_error::not_finite:
    return column + ": expected a finite number, got '" + got + "'";
  case line_error::empty_id:
    return column + ": expected ids separated by '" + printable(std::string_view(&schema.id_delimiter, 1)) +
           "', got an empty id in '" + got + "'";
  case line_error::long_bag:
    return column + ": a bag of " + std::to_string(error.fields) + " ids, more than data.max-ids=" +
           std::to_string(schema.max_ids) + " (cut to its first ids without data.strict)";
  case line_error::too_many_fields:
    return "expected at most " + std::to_string(schema.num_columns) + " fields, got " +
           std::to_string(error.fields);
  case line_error::too_few_fields:
    return "expected " + std::to_string(schema.num_columns) + " fields, got " +
           std::to_string(error.fields) +
           (error.fields + 1 == schema.num_columns && schema.label_column == 0
              ? " (a file without the label column, like Criteo's test set? the model reads "
                "column 0 as the label; predict scores such lines with --data.labels=auto or no)"
              : "");
  }
  return column + ": malformed";
}

} // namespace data
