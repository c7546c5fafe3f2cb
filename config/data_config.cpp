#include "config/data_config.hpp"

#include <algorithm>

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

} // namespace runtime
