#include "data/schema.hpp"

#include <algorithm>

#include "data/hashing.hpp"

namespace data {

column_ref column_ref::parse(std::string_view text) {
  const bool digits = !text.empty() &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    return column_ref(std::string(text));
  constexpr std::size_t cap = no_index - 1; // saturate: out of every range
  std::size_t i = 0;
  for (char c : text) {
    const auto d = static_cast<std::size_t>(c - '0');
    i = i > (cap - d) / 10 ? cap : i * 10 + d;
  }
  return column_ref(i);
}

std::string column_ref::describe() const {
  return by_name() ? "'" + name + "'" : std::to_string(index);
}

schema_options schema_options::criteo() {
  schema_options s;
  s.delimiter = '\t';
  s.header = false;
  s.label = column_ref(0);
  s.num_columns = 40;
  s.column_names.push_back("label");
  for (int i = 1; i <= 13; ++i) {
    s.dense.emplace_back(i);
    s.column_names.push_back("I" + std::to_string(i));
  }
  for (int i = 1; i <= 26; ++i) {
    s.categorical.emplace_back(13 + i);
    s.column_names.push_back("C" + std::to_string(i));
  }
  return s;
}

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 50; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > 50)
    out += ", ...";
  return out;
}

} // namespace

bool resolve_schema(const schema_options& options, const std::vector<std::string>* header,
                    const std::string& file, resolved_schema* out, std::string* error) {
  const std::string where = file + ": schema: ";
  auto fail = [&](std::string msg) {
    *error = where + msg;
    return false;
  };
  if (options.header && header == nullptr)
    return fail("the schema expects a header line but none was given");
  const std::vector<std::string>& names = options.header ? *header : options.column_names;

  // Resolve every reference to an index first; the width may depend on them.
  std::size_t max_index = 0;
  auto resolve = [&](const column_ref& ref, const char* what, std::size_t* index) {
    if (!ref.by_name()) {
      if (ref.index >= max_columns) // before max_index sizes anything
        return fail(std::string(what) + " column " + ref.describe() +
                    " is out of range: lines have at most " + std::to_string(max_columns) +
                    " columns (0-based indices 0.." + std::to_string(max_columns - 1) + ")");
      *index = ref.index;
      max_index = std::max(max_index, ref.index);
      return true;
    }
    if (ref.name.empty())
      return fail(std::string(what) + " column is not set");
    if (names.empty())
      return fail(std::string(what) + " column " + ref.describe() +
                  " is given by name, but the schema has no header line"
                  " (set header, or give the column by 0-based index)");
    const auto it = std::find(names.begin(), names.end(), ref.name);
    if (it == names.end())
      return fail(std::string(what) + " column " + ref.describe() + " is not in the " +
                  (options.header ? "header" : "column names") + " (" + join_names(names) + ")");
    if (std::find(it + 1, names.end(), ref.name) != names.end())
      return fail(std::string(what) + " column " + ref.describe() +
                  " is ambiguous: the name appears more than once; give it by index");
    *index = static_cast<std::size_t>(it - names.begin());
    max_index = std::max(max_index, *index);
    return true;
  };

  std::size_t label_index = 0;
  if (!resolve(options.label, "label", &label_index))
    return false;
  std::vector<std::size_t> dense(options.dense.size()), cat(options.categorical.size());
  for (std::size_t i = 0; i < dense.size(); ++i)
    if (!resolve(options.dense[i], "dense", &dense[i]))
      return false;
  for (std::size_t i = 0; i < cat.size(); ++i)
    if (!resolve(options.categorical[i], "categorical", &cat[i]))
      return false;

  std::vector<std::size_t> multi(options.multi_hot.size());
  for (std::size_t i = 0; i < multi.size(); ++i)
    if (!resolve(options.multi_hot[i], "multi-hot (data.multi-hot)", &multi[i]))
      return false;

  std::size_t user_index = resolved_schema::no_user;
  if (options.user && !resolve(*options.user, "user (data.user)", &user_index))
    return false;

  const std::string most = std::to_string(max_columns);
  if (options.num_columns > max_columns)
    return fail("num_columns " + std::to_string(options.num_columns) + " is more than the " + most +
                " columns a line may have");
  if (options.header && header->size() > max_columns)
    return fail("the header has " + std::to_string(header->size()) + " columns, more than the " +
                most + " a line may have");
  std::size_t width = options.num_columns;
  if (options.header) {
    if (width != 0 && width < header->size())
      return fail("num_columns " + std::to_string(width) + " is smaller than the header's " +
                  std::to_string(header->size()) + " columns");
    width = std::max(width, header->size());
  } else if (width == 0) {
    width = names.empty() ? max_index + 1 : std::max(names.size(), max_index + 1);
    if (width > max_columns)
      return fail(std::to_string(names.size()) + " column names, more than the " + most +
                  " columns a line may have");
  }

  resolved_schema r;
  r.delimiter = options.delimiter;
  r.num_columns = width;
  r.num_dense = dense.size();
  r.num_cat = cat.size();
  r.label_column = label_index;
  r.roles.assign(width, column_role{});
  r.names.resize(width);
  for (std::size_t i = 0; i < width; ++i)
    r.names[i] = i < names.size() && !names[i].empty() ? names[i] : std::to_string(i);

  auto assign = [&](std::size_t index, const column_ref& ref, const char* what, column_kind kind,
                    std::size_t slot) {
    if (index >= width)
      return fail(std::string(what) + " column " + ref.describe() + " is out of range: lines have at most " +
                  std::to_string(width) + " columns (0-based indices 0.." + std::to_string(width - 1) + ")");
    if (r.roles[index].kind != column_kind::ignore)
      return fail(std::string(what) + " column " + ref.describe() + " (index " + std::to_string(index) +
                  ") is already used as another label, dense or categorical column");
    r.roles[index] = column_role{kind, static_cast<std::uint32_t>(slot)};
    return true;
  };
  if (!assign(label_index, options.label, "label", column_kind::label, 0))
    return false;
  for (std::size_t i = 0; i < dense.size(); ++i)
    if (!assign(dense[i], options.dense[i], "dense", column_kind::dense, i))
      return false;
  for (std::size_t i = 0; i < cat.size(); ++i)
    if (!assign(cat[i], options.categorical[i], "categorical", column_kind::categorical, i))
      return false;

  if (options.user) {
    if (user_index >= width)
      return fail("user (data.user) column " + options.user->describe() +
                  " is out of range: lines have at most " + std::to_string(width) +
                  " columns (0-based indices 0.." + std::to_string(width - 1) + ")");
    if (user_index == label_index)
      return fail("user (data.user) column " + options.user->describe() +
                  " is the label column; name the column that identifies the user");
    r.user_column = user_index;
  }

  if (!multi.empty()) {
    if (options.id_delimiter == options.delimiter || options.id_delimiter == '\n' || options.id_delimiter == '\r')
      return fail("the id delimiter (data.id-delimiter) must differ from the field delimiter and from line ends");
    if (options.max_ids == 0)
      return fail("data.max-ids must be at least 1");
    r.multi_hot.assign(r.num_cat, 0);
    r.id_delimiter = options.id_delimiter;
    r.max_ids = options.max_ids;
    for (std::size_t i = 0; i < multi.size(); ++i) {
      if (multi[i] >= width || r.roles[multi[i]].kind != column_kind::categorical)
        return fail("multi-hot (data.multi-hot) column " + options.multi_hot[i].describe() +
                    " is not a categorical column (list it in data.categorical too)");
      r.multi_hot[r.roles[multi[i]].slot] = 1;
    }
  }
  r.missing_hash.resize(r.num_cat);
  for (std::size_t c = 0; c < r.num_cat; ++c)
    r.missing_hash[c] = hash_categorical("", c);
  *out = std::move(r);
  return true;
}

std::vector<std::string> split_header(std::string_view line, char delimiter) {
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  if (line.substr(0, 3) == "\xEF\xBB\xBF")
    line.remove_prefix(3);
  std::vector<std::string> out;
  for (;;) {
    const std::size_t cut = line.find(delimiter);
    std::string_view field = line.substr(0, cut);
    while (!field.empty() && (field.front() == ' ' || field.front() == '\t'))
      field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\t'))
      field.remove_suffix(1);
    out.emplace_back(field);
    if (cut == std::string_view::npos)
      break;
    line.remove_prefix(cut + 1);
  }
  return out;
}

} // namespace data
