#include "runtime/options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace runtime {
namespace {

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

using value_t = std::variant<bool, std::int64_t, double, std::string,
                             std::vector<std::string>>;
using error_t = std::optional<std::string>;
constexpr auto npos = std::string_view::npos;

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  auto b = s.find_first_not_of(ws);
  if (b == npos)
    return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool is_kebab(std::string_view part) {
  if (part.empty() || part[0] == '-')
    return false;
  return std::all_of(part.begin(), part.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

bool is_dotted_kebab(std::string_view s) {
  for (std::size_t start = 0;;) {
    auto dot = s.find('.', start);
    if (!is_kebab(s.substr(start, dot == npos ? npos : dot - start)))
      return false;
    if (dot == npos)
      return true;
    start = dot + 1;
  }
}

// Characters we accept in a key or [group] name before looking it up; a name
// of these that is not known gets an "unknown" error with a suggestion
// instead of "malformed line".
bool is_name_like(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string group_of(const std::string& key) { return key.substr(0, key.rfind('.')); }
std::string name_of(const std::string& key) { return key.substr(key.rfind('.') + 1); }

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Levenshtein distance where swapping two adjacent characters also costs 1
// ("trian" -> "train"), the commonest typo in keys.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1,
                         prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string join(const std::vector<std::string>& xs, const char* pre = "",
                 const char* post = "") {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + std::string(pre) + x + post;
  return out;
}

std::string format_real(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v); // shortest exact form
  return std::string(buf, res.ptr);
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string format_value(const value_t& v) {
  struct visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return format_real(d); }
    std::string operator()(const std::string& s) const { return quote(s); }
    std::string operator()(const std::vector<std::string>& xs) const {
      std::vector<std::string> q;
      for (const auto& x : xs)
        q.push_back(quote(x));
      return "[" + join(q) + "]";
    }
  };
  return std::visit(visitor{}, v);
}

// Reads a quoted string starting at s[pos] == '"'; leaves pos after the
// closing quote.
error_t unquote(std::string_view s, std::size_t& pos, std::string& out) {
  for (++pos; pos < s.size();) {
    char c = s[pos++];
    if (c == '"')
      return std::nullopt;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos == s.size())
      break;
    switch (char e = s[pos++]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      default:
        return "unknown escape '\\" + std::string(1, e) +
               "' in a quoted string (allowed: \\\" \\\\ \\n \\t \\r)";
    }
  }
  return "unterminated quoted string";
}

error_t parse_string(std::string_view s, std::string& out, bool in_list) {
  out.clear();
  if (!s.empty() && s[0] == '"') {
    std::size_t pos = 0;
    if (auto err = unquote(s, pos, out))
      return err;
    if (pos != s.size())
      return "unexpected text after the closing quote";
    return std::nullopt;
  }
  if (s.find('"') != npos)
    return "expected a string; one containing '\"' must be quoted";
  if (in_list && s.find_first_of("[]") != npos)
    return "unbalanced '[' or ']' in a list (quote elements that contain brackets)";
  out.assign(s);
  return std::nullopt;
}

error_t parse_list(std::string_view s, std::vector<std::string>& out) {
  out.clear();
  if (!s.empty() && s.front() == '[') {
    if (s.size() < 2 || s.back() != ']')
      return "expected a list; one starting with '[' must end with ']'";
    s = trim(s.substr(1, s.size() - 2));
  }
  if (s.empty())
    return std::nullopt;
  bool quoted = false;
  for (std::size_t start = 0, i = 0; i <= s.size(); ++i) {
    if (i < s.size()) { // split at commas outside quotes
      char c = s[i];
      if (quoted) {
        if (c == '\\' && i + 1 < s.size())
          ++i;
        else if (c == '"')
          quoted = false;
        continue;
      }
      quoted = c == '"';
      if (c != ',')
        continue;
    }
    auto elem = trim(s.substr(start, i - start));
    if (elem.empty())
      return "empty list element";
    std::string str;
    if (auto err = parse_string(elem, str, true))
      return err;
    out.push_back(std::move(str));
    start = i + 1;
  }
  return std::nullopt;
}

error_t parse_int(std::string_view s, std::int64_t& out) {
  std::string_view body = s; // what from_chars sees: it takes '-' but not '+'
  bool plus = !body.empty() && body[0] == '+';
  if (plus)
    body.remove_prefix(1);
  auto digits = body;
  if (!plus && !digits.empty() && digits[0] == '-')
    digits.remove_prefix(1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != npos)
    return "expected an integer";
  auto res = std::from_chars(body.data(), body.data() + body.size(), out);
  if (res.ec == std::errc::result_out_of_range)
    return "expected an integer within the 64-bit signed range";
  if (res.ec != std::errc() || res.ptr != body.data() + body.size())
    return "expected an integer";
  return std::nullopt;
}

error_t parse_real(std::string_view s, double& out) {
  bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+'))
    s.remove_prefix(1);
  // Requiring a digit or '.' first rules out inf, nan and a second sign.
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
    return "expected a real number";
  auto res = std::from_chars(s.data(), s.data() + s.size(), out, std::chars_format::general);
  if (res.ec == std::errc::result_out_of_range)
    return "expected a real number within the range of a double";
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(out))
    return "expected a real number";
  if (negative)
    out = -out;
  return std::nullopt;
}

std::string constraint_text(const option_spec& spec) {
  if (!spec.choices.empty())
    return "one of: " + join(spec.choices);
  if (spec.min && spec.max)
    return "in [" + format_real(*spec.min) + ", " + format_real(*spec.max) + "]";
  if (spec.min)
    return ">= " + format_real(*spec.min);
  if (spec.max)
    return "<= " + format_real(*spec.max);
  return "";
}

error_t check_constraints(const option_spec& spec, const value_t& v) {
  auto in_range = [&](double x) {
    return (!spec.min || x >= *spec.min) && (!spec.max || x <= *spec.max);
  };
  auto allowed = [&](const std::string& x) {
    return spec.choices.empty() ||
           std::find(spec.choices.begin(), spec.choices.end(), x) != spec.choices.end();
  };
  switch (spec.type) {
    case opt_type::integer:
      if (!in_range(static_cast<double>(std::get<std::int64_t>(v))))
        return "out of range, expected an integer " + constraint_text(spec);
      break;
    case opt_type::real:
      if (!in_range(std::get<double>(v)))
        return "out of range, expected a real number " + constraint_text(spec);
      break;
    case opt_type::string:
      if (!allowed(std::get<std::string>(v)))
        return "expected " + constraint_text(spec);
      break;
    case opt_type::string_list:
      for (const auto& x : std::get<std::vector<std::string>>(v))
        if (!allowed(x))
          return "element '" + x + "' is not allowed, expected each element to be " +
                 constraint_text(spec);
      break;
    case opt_type::boolean: break;
  }
  return std::nullopt;
}

// Parses `text` as user input for `spec`; returns the reason on failure.
error_t parse_value(const option_spec& spec, std::string_view text, value_t& out) {
  text = trim(text);
  error_t err;
  switch (spec.type) {
    case opt_type::boolean:
      if (text != "true" && text != "false")
        return "expected a boolean (true or false)";
      out = text == "true";
      return std::nullopt;
    case opt_type::integer: err = parse_int(text, out.emplace<std::int64_t>()); break;
    case opt_type::real: err = parse_real(text, out.emplace<double>()); break;
    case opt_type::string: err = parse_string(text, out.emplace<std::string>(), false); break;
    case opt_type::string_list:
      err = parse_list(text, out.emplace<std::vector<std::string>>());
      break;
  }
  return err ? err : check_constraints(spec, out);
}

std::string bad_value(const std::string& key, std::string_view text,
                      const std::string& where, const std::string& reason) {
  return "option '" + key + "' = '" + std::string(trim(text)) + "' (" + where + "): " + reason;
}

// Cuts a trailing "; ..." or "# ..." that follows whitespace (or starts the
// line) outside double quotes.
std::string_view strip_comment(std::string_view line) {
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if ((c == ';' || c == '#') &&
               (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])))) {
      return line.substr(0, i);
    }
  }
  return line;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

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

std::vector<std::string> option_set::groups() const {
  std::vector<std::string> out;
  for (const auto& e : entries_)
    for (auto dot = e.spec.key.find('.'); dot != npos; dot = e.spec.key.find('.', dot + 1))
      if (std::find(out.begin(), out.end(), e.spec.key.substr(0, dot)) == out.end())
        out.push_back(e.spec.key.substr(0, dot));
  return out;
}

std::string option_set::unknown_key(const std::string& key, const std::string& where) const {
  std::string msg = "unknown option '" + key + "' (" + where + ")";
  // Closest key by edit distance, also matching a bare name ("batch-size").
  std::string low = lower(key);
  std::size_t best = npos;
  const std::string* best_key = nullptr;
  for (const auto& e : entries_) {
    auto d = std::min(edit_distance(low, e.spec.key), edit_distance(low, name_of(e.spec.key)));
    if (d < best) {
      best = d;
      best_key = &e.spec.key;
    }
  }
  if (best_key && best <= std::clamp<std::size_t>(key.size() / 4, 1, 3))
    return msg + "; did you mean '" + *best_key + "'?";
  std::vector<std::string> siblings;
  if (key.find('.') != npos)
    for (const auto& e : entries_)
      if (group_of(e.spec.key) == group_of(key))
        siblings.push_back(e.spec.key);
  if (!siblings.empty())
    return msg + "; options in [" + group_of(key) + "]: " + join(siblings);
  return msg + "; known groups: " + join(groups(), "[", "]");
}

std::string option_set::unknown_group(const std::string& group, const std::string& where) const {
  std::string msg = "unknown group '[" + group + "]' (" + where + ")";
  std::string low = lower(group);
  auto known = groups();
  std::size_t best = npos;
  const std::string* best_group = nullptr;
  for (const auto& g : known)
    if (auto d = edit_distance(low, g); d < best) {
      best = d;
      best_group = &g;
    }
  if (best_group && best <= std::clamp<std::size_t>(group.size() / 4, 1, 3))
    return msg + "; did you mean '[" + *best_group + "]'?";
  return msg + "; known groups: " + join(known, "[", "]");
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
bool option_set::is_set(const std::string& key) const { return source(key) != "default"; }
std::string option_set::source(const std::string& key) const {
  type(key); // aborts on an unknown key
  return entries_[index_.at(key)].source;
}
std::string option_set::value_text(const std::string& key) const {
  type(key); // aborts on an unknown key
  return format_value(entries_[index_.at(key)].val);
}

std::string option_set::help_text(const std::string& usage_line) const {
  std::string out = usage_line + "\n\n"
      "Options come from an INI file ([group] sections of 'key = value' lines)\n"
      "and from the command line (--group.key=value), which overrides the file.\n"
      "A boolean may be given as a bare --group.flag (meaning true).\n\n"
      "  -h, --help\n      print this help and exit\n"
      "  --config-file=PATH\n      read options from this INI file (it must exist)\n";
  std::vector<std::string> leaf_groups;
  for (const auto& e : entries_)
    if (std::find(leaf_groups.begin(), leaf_groups.end(), group_of(e.spec.key)) ==
        leaf_groups.end())
      leaf_groups.push_back(group_of(e.spec.key));
  for (const auto& g : leaf_groups) {
    out += "\n[" + g + "]\n";
    for (const auto& e : entries_) {
      if (group_of(e.spec.key) != g)
        continue;
      out += "  --" + e.spec.key + "=<" + to_string(e.spec.type) + ">  (default: " +
             format_value(e.def);
      if (auto c = constraint_text(e.spec); !c.empty())
        out += "; " + c;
      out += ")\n      " + one_line(e.spec.help) + "\n";
    }
  }
  return out;
}

std::string option_set::effective_ini() const {
  std::string out = "; Effective configuration: every option with the value in use.\n"
                    "; Run again with --config-file=<this file>.\n";
  for (const auto& g : groups()) { // keeps groups together even if added interleaved
    bool header = false;
    for (const auto& e : entries_) {
      if (group_of(e.spec.key) != g)
        continue;
      if (!header) {
        out += "\n[" + g + "]\n";
        header = true;
      }
      if (!e.spec.help.empty())
        out += "; " + one_line(e.spec.help) + "\n";
      std::string c = constraint_text(e.spec);
      out += "; " + std::string(to_string(e.spec.type)) + (c.empty() ? "" : ", " + c) +
             ", default " + format_value(e.def) + ", from " + one_line(e.source) + "\n";
      out += name_of(e.spec.key) + " = " + format_value(e.val) + "\n";
    }
  }
  return out;
}

} // namespace runtime
