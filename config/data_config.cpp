#include "config/data_config.hpp"

#include <algorithm>

#include "config/train_config.hpp"
#include "data/reader.hpp"

namespace runtime {

std::optional<std::string> check_inputs(const std::vector<std::string>& files,
                                        const data::schema_options& schema, const char* key) {
  if (files.empty())
    return std::nullopt;
  data::reader_options ro;
  ro.files = files;
  ro.schema = schema;
  std::string err;
  if (!data::reader::open(ro, &err))
    return std::string("option '") + key + "': " + err;
  return std::nullopt;
}

std::optional<std::string> check_column_index(const option_set& o, const char* key,
                                              const std::vector<data::column_ref>& refs) {
  for (const auto& ref : refs)
    if (!ref.by_name() && ref.index >= data::max_columns)
      return std::string("option '") + key + "' = " + o.value_text(key) + " (" + o.source(key) +
             "): column index " + ref.describe() + " is out of range, expected 0.." +
             std::to_string(data::max_columns - 1) + " (a line has at most " +
             std::to_string(data::max_columns) + " fields)";
  return std::nullopt;
}

std::optional<std::string> set_multi_hot_columns(const option_set& o, data::schema_options& schema) {
  const auto list = o.get_list("data.multi-hot");
  if (list.empty())
    return std::nullopt;
  const std::string key = "option 'data.multi-hot' = " + o.value_text("data.multi-hot") + " (" +
                          o.source("data.multi-hot") + "): ";
  for (const auto& x : list)
    schema.multi_hot.push_back(data::column_ref::parse(x));
  if (auto e = check_column_index(o, "data.multi-hot", schema.multi_hot))
    return e;
  std::string delim = o.get_string("data.id-delimiter");
  if (delim == "tab" || delim == "\\t")
    delim = "\t";
  if (delim.size() != 1 || delim[0] == schema.delimiter || delim[0] == '\n' || delim[0] == '\r')
    return "option 'data.id-delimiter' = '" + o.get_string("data.id-delimiter") + "' (" +
           o.source("data.id-delimiter") +
           "): expected one character other than the field delimiter and the line end";
  schema.id_delimiter = delim[0];
  schema.max_ids = static_cast<std::size_t>(o.get_int("data.max-ids"));
  data::resolved_schema resolved;
  std::string err;
  if (!schema.header && !data::resolve_schema(schema, nullptr, "", &resolved, &err))
    return key + err.substr(std::min(err.find("multi-hot (data.multi-hot)"), err.size()));
  return std::nullopt;
}

std::optional<std::string> set_user_column(const std::string& text, const std::string& source,
                                           data::schema_options& schema) {
  const auto ref = data::column_ref::parse(text);
  const std::string key = "option 'data.user' = '" + text + "' (" + source + "): ";
  if (!ref.by_name() && ref.index >= data::max_columns)
    return key + "column index " + ref.describe() + " is out of range, expected 0.." +
           std::to_string(data::max_columns - 1);
  schema.user = ref;
  // Without a header the layout is known now: a mistyped name or index is
  // refused before any file (or synthetic set) is read.
  data::resolved_schema with_user, without_user;
  auto plain = schema;
  plain.user.reset();
  std::string err;
  if (!schema.header && data::resolve_schema(plain, nullptr, "", &without_user, &err) &&
      !data::resolve_schema(schema, nullptr, "", &with_user, &err))
    return key + err.substr(std::min(err.find("user (data.user)"), err.size()));
  return std::nullopt;
}

std::optional<std::string> build_data_settings(const option_set& o, bool need_train_files,
                                               data_settings& d) {
  d.train = o.get_list("data.train");
  d.eval = o.get_list("data.eval");
  d.strict = o.get_bool("data.strict");
  d.max_logged_errors = static_cast<std::size_t>(o.get_int("data.max-logged-errors"));
  d.synthetic_rows = static_cast<std::uint64_t>(o.get_int("data.synthetic-rows"));
  d.synthetic_eval_rows = static_cast<std::uint64_t>(o.get_int("data.synthetic-eval-rows"));
  d.synthetic_seed = static_cast<std::uint64_t>(o.get_int("data.synthetic-seed"));
  d.teacher_seed = static_cast<std::uint64_t>(o.get_int("data.teacher-seed"));
  d.synthetic_dir = o.get_string("data.synthetic-dir");

  const char* schema_keys[] = {"data.delimiter", "data.header", "data.label",
                               "data.dense",     "data.categorical", "data.columns"};
  if (o.get_string("data.format") == "criteo") {
    option_set defaults; // a saved effective config sets every key: compare values
    add_train_options(defaults);
    for (const char* k : schema_keys)
      if (o.value_text(k) != defaults.value_text(k))
        return std::string("option '") + k + "' (" + o.source(k) +
               ") applies only with data.format=delimited";
    d.schema = data::schema_options::criteo();
  } else {
    data::schema_options sc;
    std::string delim = o.get_string("data.delimiter");
    if (delim == "tab" || delim == "\\t")
      delim = "\t";
    if (delim.size() != 1)
      return "option 'data.delimiter' = '" + o.get_string("data.delimiter") +
             "': expected one character or 'tab'";
    sc.delimiter = delim[0];
    sc.header = o.get_bool("data.header");
    sc.label = data::column_ref::parse(o.get_string("data.label"));
    for (const auto& x : o.get_list("data.dense"))
      sc.dense.push_back(data::column_ref::parse(x));
    for (const auto& x : o.get_list("data.categorical"))
      sc.categorical.push_back(data::column_ref::parse(x));
    if (auto e = check_column_index(o, "data.label", {sc.label}))
      return e;
    if (auto e = check_column_index(o, "data.dense", sc.dense))
      return e;
    if (auto e = check_column_index(o, "data.categorical", sc.categorical))
      return e;
    if (sc.categorical.empty())
      return "option 'data.categorical': data.format=delimited needs at least one categorical column";
    sc.num_columns = static_cast<std::size_t>(o.get_int("data.columns"));
    d.schema = sc;
    if (d.train.empty() && need_train_files)
      return "option 'data.train': data.format=delimited needs training files (synthetic data is Criteo-shaped)";
  }

  if (auto e = set_multi_hot_columns(o, d.schema))
    return e;
  if (const auto& user = o.get_string("data.user"); !user.empty())
    if (auto e = set_user_column(user, o.source("data.user"), d.schema))
      return e;

  if (auto err = check_inputs(d.train, d.schema, "data.train"))
    return err;
  if (auto err = check_inputs(d.eval, d.schema, "data.eval"))
    return err;
  return std::nullopt;
}

} // namespace runtime
