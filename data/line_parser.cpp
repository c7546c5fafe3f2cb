#include "data/line_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "data/hashing.hpp"

namespace data {

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

inline const char* field_end(const char* p, const char* e, char d) {
  // Fields are short (Criteo: 1-8 bytes), so a byte loop beats memchr's setup.
  while (p != e && *p != d)
    ++p;
  return p;
}

// Any decimal number std::from_chars accepts, plus a leading '+'.
enum class number { ok, not_finite, invalid };
inline number parse_double(const char* p, const char* e, double* out) {
  if (p != e && *p == '+' && e - p > 1 && p[1] != '-')
    ++p;
  const auto r = std::from_chars(p, e, *out);
  if (r.ptr != e || p == e)
    return number::invalid;
  if (r.ec == std::errc::result_out_of_range)
    return number::not_finite; // e.g. 1e400
  if (r.ec != std::errc())
    return number::invalid;
  return std::isfinite(*out) ? number::ok : number::not_finite; // "inf", "nan"
}

} // namespace

bool parse_line(const resolved_schema& schema, std::string_view line, float* label, float* dense,
                std::uint64_t* cat, line_error* error) {
  const char d = schema.delimiter;
  const char* p = line.data();
  const char* const e = p + line.size();
  const column_role* roles = schema.roles.data();
  const std::size_t ncol = schema.num_columns;
  std::size_t col = 0;
  for (;; ++col) {
    // p is the start of field `col`; the previous field ended in a delimiter.
    if (col == ncol) {
      error->kind = line_error::too_many_fields;
      error->column = col;
      error->fields = ncol + 1 + static_cast<std::size_t>(std::count(p, e, d));
      return false;
    }
    const column_role role = roles[col];
    const char* fe;
    switch (role.kind) {
    case column_kind::categorical:
      fe = field_end(p, e, d);
      cat[role.slot] = hash_categorical(std::string_view(p, static_cast<std::size_t>(fe - p)), role.slot);
      break;
    case column_kind::dense: {
      // Fast path: an optional '-' and up to 18 digits (no overflow).
      const char* q = p;
      const bool negative = q != e && *q == '-';
      q += negative;
      const char* digits = q;
      std::uint64_t v = 0;
      while (q != e) {
        const unsigned digit = static_cast<unsigned>(static_cast<unsigned char>(*q)) - '0';
        if (digit > 9)
          break;
        v = v * 10 + digit;
        ++q;
      }
      const std::ptrdiff_t n = q - digits;
      if ((q == e || *q == d) && n > 0 && n <= 18) {
        fe = q;
        dense[role.slot] = negative ? 0.0f
                           : v < table_size ? small_log1p.v[v]
                                            : dense_transform(static_cast<double>(v));
      } else if ((q == e || *q == d) && q == p) {
        fe = q; // empty field: missing
        dense[role.slot] = 0.0f;
      } else {
        fe = field_end(q, e, d);
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
      fe = field_end(p, e, d);
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
      fe = field_end(p, e, d);
      break;
    }
    if (fe == e) {
      ++col;
      break;
    }
    p = fe + 1;
  }
  // Fields the line does not have are empty.
  for (; col < ncol; ++col) {
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
  return true;
}

std::string describe(const resolved_schema& schema, const line_error& error) {
  constexpr std::size_t max_shown = 40;
  std::string got(error.text.substr(0, max_shown));
  if (error.text.size() > max_shown)
    got += "...";
  const std::string column =
      "column " + (error.column < schema.names.size() ? schema.names[error.column] : std::to_string(error.column));
  switch (error.kind) {
  case line_error::bad_label:
    return column + ": expected a label 0 or 1, got '" + got + "'";
  case line_error::bad_number:
    return column + ": expected a number, got '" + got + "'";
  case line_error::not_finite:
    return column + ": expected a finite number, got '" + got + "'";
  case line_error::too_many_fields:
    return "expected at most " + std::to_string(schema.num_columns) + " fields, got " +
           std::to_string(error.fields);
  }
  return column + ": malformed";
}

} // namespace data
