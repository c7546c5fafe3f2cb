#include "config/options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "config/option_values.hpp"

namespace runtime {
namespace {

using namespace detail;

// Programmer errors abort with file:line even under NDEBUG, which Release
// builds define.
[[noreturn]] void die(const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: %s\n", file, line, msg.c_str());
  std::abort();
}
#define SS_OPT_CHECK(cond, msg)                                                \
  do {                                                                         \
    if (!(cond))                                                               \
      die(__FILE__, __LINE__, (msg));                                          \
  } while (false)

} // namespace

const char* to_string(opt_type t) {
  switch (t) {
    case opt_type::boolean: return "boolean";
    case opt_type::integer: return "integer";
    case opt_type::real: return "real";
    case opt_type::string: return "string";
    case opt_type::string_list: return "list of strings";
  }
  return "?";
}

void option_set::add(option_spec spec) {
  const std::string& k = spec.key;
  SS_OPT_CHECK(k.find('.') != npos && is_dotted_kebab(k),
               "option_set::add: key '" + k + "' is not 'group.name' in kebab-case");
  SS_OPT_CHECK(index_.count(k) == 0, "option_set::add: duplicate key '" + k + "'");
  bool numeric = spec.type == opt_type::integer || spec.type == opt_type::real;
  bool textual = spec.type == opt_type::string || spec.type == opt_type::string_list;
  SS_OPT_CHECK(spec.choices.empty() || textual,
               "option_set::add: choices on non-string option '" + k + "'");
  SS_OPT_CHECK((!spec.min && !spec.max) || numeric,
               "option_set::add: min/max on non-numeric option '" + k + "'");
  SS_OPT_CHECK(!spec.min || !spec.max || *spec.min <= *spec.max,
               "option_set::add: min > max for '" + k + "'");
  value_t def;
  auto err = parse_value(spec, spec.default_value, def);
  SS_OPT_CHECK(!err, "option_set::add: invalid default for " +
                         bad_value(k, spec.default_value, "default", err.value_or("")));
  index_.emplace(k, entries_.size());
  entries_.push_back(entry{std::move(spec), def, def, "default"});
}

std::optional<std::string> option_set::parse_text(const std::string& ini, const std::string& name) {
  std::vector<entry> work = entries_;
  for (auto& e : work) {
    e.val = e.def;
    e.source = "default";
  }
  if (auto err = read_text(ini, name, work))
    return err;
  entries_ = std::move(work);
  help_requested_ = false;
  config_file_.clear();
  return std::nullopt;
}

std::optional<std::string> option_set::parse(int argc, const char* const* argv) {
  return parse(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
}

std::optional<std::string> option_set::parse(const std::vector<std::string>& args) {
  help_requested_ = std::any_of(args.begin(), args.end(),
                                [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (help_requested_)
    return std::nullopt;
  // Work on a copy so that a failed parse leaves the current values alone.
  std::vector<entry> work = entries_;
  for (auto& e : work) {
    e.val = e.def;
    e.source = "default";
  }
  std::optional<std::string> file;
  std::vector<std::pair<std::size_t, value_t>> overrides;
  std::vector<bool> seen(entries_.size(), false);
  for (const auto& arg : args) {
    auto eq = arg.find('=');
    std::string name = arg.size() > 2 ? arg.substr(2, eq == npos ? npos : eq - 2) : "";
    if (arg.compare(0, 2, "--") != 0 || name.empty())
      return "unexpected argument '" + arg +
             "' (options are written --group.key=value; see --help)";
    if (name == "config-file") {
      if (eq == npos || eq + 1 == arg.size())
        return std::string("option '--config-file' needs a path: use --config-file=PATH");
      if (file)
        return std::string("option '--config-file' is given twice on the command line");
      file = arg.substr(eq + 1);
      continue;
    }
    auto it = index_.find(name);
    if (it == index_.end())
      return unknown_key(name, "command line");
    const option_spec& spec = entries_[it->second].spec;
    if (eq == npos && spec.type != opt_type::boolean)
      return "option '" + name + "' (command line) needs a value: use --" + name + "=<" +
             to_string(spec.type) + ">";
    if (seen[it->second])
      return "option '" + name + "' is given twice on the command line";
    seen[it->second] = true;
    std::string text = eq == npos ? "true" : arg.substr(eq + 1);
    value_t v;
    if (auto err = parse_value(spec, text, v))
      return bad_value(name, text, "command line", *err);
    overrides.emplace_back(it->second, std::move(v));
  }
  if (file)
    if (auto err = read_file(*file, work))
      return err;
  for (auto& [i, v] : overrides) {
    work[i].val = std::move(v);
    work[i].source = "command line";
  }
  entries_ = std::move(work);
  config_file_ = file.value_or("");
  return std::nullopt;
}

std::optional<std::string> option_set::read_file(const std::string& path,
                                                 std::vector<entry>& work) const {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return "cannot read config file '" + path + "': " + std::strerror(errno);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    text.append(buf, n);
  int read_errno = std::ferror(f) ? errno : 0; // e.g. EISDIR for a directory
  std::fclose(f);
  if (read_errno != 0)
    return "cannot read config file '" + path + "': " + std::strerror(read_errno);
  return read_text(text, path, work);
}

std::optional<std::string> option_set::read_text(std::string_view text, const std::string& path,
                                                 std::vector<entry>& work) const {
  std::string_view rest(text);
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") // UTF-8 byte order mark
    rest.remove_prefix(3);
  std::string group; // current [group]; empty before the first header
  std::vector<std::size_t> set_at(work.size(), 0); // line per option, 0 = unset
  for (std::size_t line_no = 1; !rest.empty(); ++line_no) {
    auto nl = rest.find('\n');
    std::string_view raw = rest.substr(0, nl);
    rest = nl == npos ? std::string_view{} : rest.substr(nl + 1);
    const std::string where = path + ":" + std::to_string(line_no);
    const std::string malformed = where +
        ": expected 'key = value', '[group]' or a comment, got '" + std::string(trim(raw)) + "'";
    std::string_view line = trim(strip_comment(raw));
    if (line.empty())
      continue;
    if (line.front() == '[') {
      auto name = trim(line.substr(1, line.size() - 1 - (line.back() == ']')));
      if (line.back() != ']' || !is_name_like(name))
        return malformed;
      group = std::string(name);
      auto known = groups();
      if (std::find(known.begin(), known.end(), group) == known.end())
        return unknown_group(group, where);
      continue;
    }
    auto eq = line.find('=');
    if (eq == npos || !is_name_like(trim(line.substr(0, eq))))
      return malformed;
    std::string key(trim(line.substr(0, eq)));
    std::string_view text = trim(line.substr(eq + 1));
    if (group.empty()) {
      std::string msg = where + ": option '" + key + "' is outside any [group] section";
      for (const auto& e : work)
        if (name_of(e.spec.key) == key)
          return msg + "; did you mean '" + e.spec.key + "' (under [" + group_of(e.spec.key) + "])?";
      return msg;
    }
    std::string full = group + "." + key;
    auto it = index_.find(full);
    if (it == index_.end())
      return unknown_key(full, where);
    std::size_t i = it->second;
    if (set_at[i] != 0)
      return where + ": option '" + full + "' is set twice in the file (first at " + path +
             ":" + std::to_string(set_at[i]) + ")";
    set_at[i] = line_no;
    value_t v;
    if (auto err = parse_value(work[i].spec, text, v))
      return bad_value(full, text, where, *err);
    work[i].val = std::move(v);
    work[i].source = where;
  }
  return std::nullopt;
}

const option_set::entry& option_set::at(const std::string& key, opt_type expected) const {
  auto it = index_.find(key);
  SS_OPT_CHECK(it != index_.end(), "option_set: unknown key '" + key + "'");
  const entry& e = entries_[it->second];
  SS_OPT_CHECK(e.spec.type == expected, "option_set: '" + key + "' is a " +
                                            to_string(e.spec.type) + ", not a " +
                                            to_string(expected));
  return e;
}

bool option_set::get_bool(const std::string& key) const {
  return std::get<bool>(at(key, opt_type::boolean).val);
}
std::int64_t option_set::get_int(const std::string& key) const {
  return std::get<std::int64_t>(at(key, opt_type::integer).val);
}
double option_set::get_real(const std::string& key) const {
  return std::get<double>(at(key, opt_type::real).val);
}
const std::string& option_set::get_string(const std::string& key) const {
  return std::get<std::string>(at(key, opt_type::string).val);
}
const std::vector<std::string>& option_set::get_list(const std::string& key) const {
  return std::get<std::vector<std::string>>(at(key, opt_type::string_list).val);
}

opt_type option_set::type(const std::string& key) const {
  SS_OPT_CHECK(contains(key), "option_set: unknown key '" + key + "'");
  return entries_[index_.at(key)].spec.type;
}
bool option_set::contains(const std::string& key) const { return index_.count(key) != 0; }
std::vector<std::string> option_set::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries_)
    out.push_back(e.spec.key);
  return out;
}
std::optional<std::string> option_set::set_if_unset(const std::string& key,
                                                    const std::string& text,
                                                    const std::string& source) {
  type(key); // aborts on an unknown key
  if (entries_[index_.at(key)].source != "default")
    return std::nullopt;
  return set(key, text, source);
}

std::optional<std::string> option_set::set(const std::string& key, const std::string& text,
                                           const std::string& source) {
  type(key); // aborts on an unknown key
  entry& e = entries_[index_.at(key)];
  value_t v;
  if (auto err = parse_value(e.spec, text, v))
    return bad_value(key, text, source, *err);
  e.val = std::move(v);
  e.source = source;
  return std::nullopt;
}

bool option_set::is_set(const std::string& key) const { return source(key) != "default"; }
std::string option_set::source(const std::string& key) const {
  type(key); // aborts on an unknown key
  return entries_[index_.at(key)].source;
}
std::string option_set::value_text(const std::string& key) const {
  type(key); // aborts on an unknown key
  return format_value(entries_[index_.at(key)].val);
}

} // namespace runtime
