#pragma once
// The data.* settings of `train` (declared in add_train_options(), read by
// build_train_config()): the training and eval files, their schema and the
// synthetic set that stands in for them, with the checks that refuse a bad
// file or column before anything is built, naming the key.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/schema.hpp"
#include "config/options.hpp"

namespace runtime {

struct data_settings {
  std::vector<std::string> train;   // empty: generate the default synthetic set
  std::vector<std::string> eval;    // empty: synthetic eval set, or no evaluation
  data::schema_options schema = data::schema_options::criteo();
  bool strict = false;              // a malformed line stops the run
  // A line with another number of fields than the schema stops the run
  // (predict and eval of a saved model; reader_options::whole_lines).
  bool whole_lines = false;
  std::size_t max_logged_errors = 5;
  // Default synthetic data (used when data.train is empty).
  std::uint64_t synthetic_rows = 1'000'000;
  std::uint64_t synthetic_eval_rows = 100'000;
  std::uint64_t synthetic_seed = 1; // eval uses synthetic_seed + 1
  std::uint64_t teacher_seed = 42;
  std::string synthetic_dir = "out/synthetic";
};

// Opens the files once with the schema: existence, readability, header and
// column names are checked here, before anything is built.
std::optional<std::string> check_inputs(const std::vector<std::string>& files,
                                        const data::schema_options& schema, const char* key);

// A column given by index must be below data::max_columns: refused here,
// naming the key, before a reader sizes a schema by it.
std::optional<std::string> check_column_index(const option_set& o, const char* key,
                                              const std::vector<data::column_ref>& refs);

// data.multi-hot, data.id-delimiter, data.max-ids into the schema; without a
// header the columns are checked now, naming the key.
std::optional<std::string> set_multi_hot_columns(const option_set& o, data::schema_options& schema);

// data.user = `text` (from `source`, for messages): sets schema.user to that
// column. Refuses, naming data.user, an index beyond max_columns and, for a
// header-less layout (known without a file), a name or index not in it.
std::optional<std::string> set_user_column(const std::string& text, const std::string& source,
                                           data::schema_options& schema);

// data.*: the files, their schema (criteo, or the delimited keys) and the
// synthetic set, each checked naming its key. need_train_files: a delimited
// schema needs data.train (synthetic data is Criteo-shaped).
std::optional<std::string> build_data_settings(const option_set& o, bool need_train_files,
                                               data_settings& d);

} // namespace runtime
