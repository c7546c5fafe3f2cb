#include "config/option_values.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace runtime::detail {

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

} // namespace runtime::detail
