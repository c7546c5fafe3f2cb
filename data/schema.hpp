#pragma once
// Column layout of a delimited CTR input file: which field is the label, which
// are dense (numeric) features and which are categorical.
//
// schema_options is what a user writes (columns by 0-based index or by name);
// resolved_schema is what the line parser uses: one role per field position,
// checked against the file's header when there is one. Resolution happens once
// per file in reader::open(), never per line.
//
// Format limits (deliberate, for speed): one single-byte delimiter, no quoting,
// so a field can never contain the delimiter or a newline.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace data {

// The most fields a line may have (data.columns, header width, highest
// column index + 1). Each reader keeps about 50 bytes per column (role, name,
// field end), so this bound keeps a schema within a few MB per reader however
// the options are set; CTR files have tens to hundreds of columns.
inline constexpr std::size_t max_columns = std::size_t(1) << 16;

// A column named by 0-based field index or by name. Names are looked up in
// the file's header line, or in schema_options::column_names when the schema
// has no header.
struct column_ref {
  static constexpr std::size_t no_index = static_cast<std::size_t>(-1);
  std::size_t index = no_index; // used unless no_index
  std::string name;             // used when index == no_index

  column_ref() = default;
  template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
  column_ref(Int i) : index(static_cast<std::size_t>(i)) {} // NOLINT: implicit on purpose
  column_ref(const char* n) : name(n) {}                      // NOLINT
  column_ref(std::string n) : name(std::move(n)) {}           // NOLINT

  // For config values: all digits ("3") is an index, anything else a name.
  // A header name made only of digits must therefore be given by index. An
  // index too large for size_t saturates just below no_index, so that the
  // range checks refuse it (whatever its length, it stays an index).
  static column_ref parse(std::string_view text);

  bool by_name() const { return index == no_index; }
  // "3" or "'age'", for error messages.
  std::string describe() const;
};

struct schema_options {
  char delimiter = '\t';
  // The first line of every input file names the columns. It is not data and
  // is not counted in reader statistics (data lines then start at line 2).
  bool header = false;
  column_ref label = column_ref(0);
  std::vector<column_ref> dense;       // order = order in batch.dense
  std::vector<column_ref> categorical; // order = hashing column index
  // The column naming each example's user (data.user), for GAUC; none when
  // unset. Any column but the label: typically one of the categorical ones
  // (it then stays a feature too). Its raw text is the user's identity.
  std::optional<column_ref> user;
  // Multi-hot columns (data.multi-hot): categorical columns whose field is a
  // bag of ids separated by id_delimiter; an empty field is an empty bag. A
  // bag longer than max_ids keeps its first max_ids ids (the line parser
  // reports the cut). Each must also be listed in `categorical`.
  std::vector<column_ref> multi_hot;
  char id_delimiter = '|';
  std::size_t max_ids = 1024;
  // Most fields a line may have; more is a malformed line. 0 means: the
  // header's width, or without header the highest referenced index + 1 (so a
  // header-less file with unused trailing columns must set it). At most
  // max_columns.
  std::size_t num_columns = 0;
  // Names for a header-less layout (messages and by-name references). Ignored
  // when header is true: the file's own header wins.
  std::vector<std::string> column_names;

  // Criteo Kaggle/Terabyte TSV: label, I1..I13 (dense), C1..C26 (categorical),
  // 40 fields, no header, columns named label, I1..I13, C1..C26.
  static schema_options criteo();
};

enum class column_kind : std::uint8_t { ignore, label, dense, categorical };

struct column_role {
  column_kind kind = column_kind::ignore;
  std::uint32_t slot = 0; // index into dense or categorical (0-based)
};

// The schema as applied to one file.
struct resolved_schema {
  char delimiter = '\t';
  std::size_t num_columns = 0; // most fields per line
  std::size_t num_dense = 0;
  std::size_t num_cat = 0;
  std::size_t label_column = 0;
  static constexpr std::size_t no_user = static_cast<std::size_t>(-1);
  std::size_t user_column = no_user;       // field index of schema_options::user
  std::vector<column_role> roles;          // [num_columns]
  std::vector<std::string> names;          // [num_columns], for messages
  std::vector<std::uint64_t> missing_hash; // [num_cat], hash_categorical("", c)
  // [num_cat]: 1 for a multi-hot slot. Empty when no column is multi-hot:
  // the single-hot parse and batch layout are then as without the option.
  std::vector<std::uint8_t> multi_hot;
  char id_delimiter = '|';
  std::size_t max_ids = 1024;
  bool has_multi_hot() const { return !multi_hot.empty(); }
};

// Resolves `options` for `file`. `header` holds the file's header fields, or
// is nullptr when options.header is false. On failure returns false and sets
// *error to a message naming the file and the offending column. A width,
// header or index beyond max_columns is refused before anything is sized.
bool resolve_schema(const schema_options& options, const std::vector<std::string>* header,
                    const std::string& file, resolved_schema* out, std::string* error);

// Splits a header line on `delimiter`. Strips a trailing '\r', a leading UTF-8
// byte-order mark, and blanks around each name.
std::vector<std::string> split_header(std::string_view line, char delimiter);

} // namespace data
