#pragma once
// Value syntax of the strict option parser (config/options.hpp): parsing and
// formatting of booleans, integers, reals, strings and lists, constraint
// checks, key-name rules and the edit distance behind "did you mean". Used
// by options.cpp and option_help.cpp (format_real by the config readers too);
// see options.hpp for the syntax itself.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/options.hpp"

namespace runtime::detail {

using value_t = std::variant<bool, std::int64_t, double, std::string,
                             std::vector<std::string>>;
using error_t = std::optional<std::string>; // nullopt: fine; else the message
constexpr auto npos = std::string_view::npos;

std::string_view trim(std::string_view s);
std::string group_of(const std::string& key); // "a.b.c" -> "a.b"
std::string name_of(const std::string& key);  // "a.b.c" -> "c"
// xs joined with ", ", each wrapped in pre/post
std::string join(const std::vector<std::string>& xs, const char* pre = "", const char* post = "");
// "option 'KEY' = 'TEXT' (WHERE): REASON"
std::string bad_value(const std::string& key, std::string_view text, const std::string& where,
                      const std::string& reason);
bool is_kebab(std::string_view part);
bool is_dotted_kebab(std::string_view s);
bool is_name_like(std::string_view s);
std::string lower(std::string s);
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string format_real(double v);
std::string quote(const std::string& s);
std::string format_value(const value_t& v);
error_t unquote(std::string_view s, std::size_t& pos, std::string& out);
error_t parse_string(std::string_view s, std::string& out, bool in_list);
error_t parse_list(std::string_view s, std::vector<std::string>& out);
error_t parse_int(std::string_view s, std::int64_t& out);
error_t parse_real(std::string_view s, double& out);
std::string constraint_text(const option_spec& spec);
error_t check_constraints(const option_spec& spec, const value_t& v);
error_t parse_value(const option_spec& spec, std::string_view text, value_t& out);
std::string_view strip_comment(std::string_view line);
std::string one_line(std::string s);

} // namespace runtime::detail
