// Key-name rules and the plain text helpers of the option parser
// (config/option_values.hpp).
#include "config/option_values.hpp"

#include <algorithm>
#include <cctype>

namespace runtime::detail {

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

std::string join(const std::vector<std::string>& xs, const char* pre, const char* post) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + std::string(pre) + x + post;
  return out;
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

} // namespace runtime::detail
