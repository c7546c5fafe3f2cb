#include "data/meta.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

namespace data {
namespace {

// One list of (key, field) drives the writer, the reader and operator==, so
// the three cannot drift apart. options.rows is not listed: it equals rows.
template <class Meta, class F>
void visit_fields(Meta& m, F&& f) {
  f("format", m.format);
  f("version", m.version);
  f("rows", m.rows);
  f("positive_rate", m.positive_rate);
  f("mean_probability", m.mean_probability);
  f("bayes_logloss", m.bayes_logloss);
  f("bayes_expected_logloss", m.bayes_expected_logloss);
  f("base_entropy", m.base_entropy);
  f("bayes_ne", m.bayes_ne);
  f("teacher_bias", m.teacher_bias);
  f("vocab_sizes", m.vocab_sizes);
  auto& o = m.options;
  f("seed", o.seed);
  f("teacher_seed", o.teacher_seed);
  f("zipf_exponent", o.zipf_exponent);
  f("vocab_scale", o.vocab_scale);
  f("cat_effect_scale", o.cat_effect_scale);
  f("interaction_count", o.interaction_count);
  f("interaction_rank", o.interaction_rank);
  f("interaction_scale", o.interaction_scale);
  f("dense_effect_scale", o.dense_effect_scale);
  f("target_ctr", o.target_ctr);
  f("calibration_rows", o.calibration_rows);
  f("dense_missing", o.dense_missing);
  f("cat_missing", o.cat_missing);
  f("negative_i2", o.negative_i2);
}

constexpr const char* required_keys[] = {"format", "version", "rows", "positive_rate", "bayes_logloss",
                                         "bayes_ne"};

// --- writing ---------------------------------------------------------------

void put(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}
void put_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}
void put(std::string& out, double v) { put_number(out, v); }
void put(std::string& out, bool v) { out += v ? "true" : "false"; }
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
void put(std::string& out, T v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}
template <class T, std::size_t N>
void put(std::string& out, const std::array<T, N>& list) {
  std::string s;
  for (std::size_t i = 0; i < N; ++i) {
    if (i)
      s += ',';
    if constexpr (std::is_floating_point_v<T>)
      put_number(s, list[i]);
    else
      put(s, list[i]);
  }
  put(out, s);
}

// --- reading ---------------------------------------------------------------

struct token {
  bool is_string = false;
  std::string text;
};

bool parse_number(std::string_view t, double* v) {
  if (t == "null") {
    *v = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}
template <class T>
bool parse_integer(std::string_view t, T* v) {
  auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

bool get(const token& t, std::string* v) {
  *v = t.text;
  return t.is_string;
}
bool get(const token& t, double* v) { return !t.is_string && parse_number(t.text, v); }
bool get(const token& t, bool* v) {
  if (t.is_string)
    return false;
  if (t.text == "true" || t.text == "1")
    *v = true;
  else if (t.text == "false" || t.text == "0")
    *v = false;
  else
    return false;
  return true;
}
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
bool get(const token& t, T* v) {
  return !t.is_string && parse_integer(t.text, v);
}
template <class T, std::size_t N>
bool get(const token& t, std::array<T, N>* list) {
  if (!t.is_string)
    return false;
  std::string_view rest = t.text;
  for (std::size_t i = 0; i < N; ++i) {
    const auto comma = rest.find(',');
    if ((i + 1 < N) != (comma != std::string_view::npos))
      return false; // too few or too many elements
    const auto item = rest.substr(0, comma);
    bool ok;
    if constexpr (std::is_floating_point_v<T>)
      ok = parse_number(item, &(*list)[i]);
    else
      ok = parse_integer(item, &(*list)[i]);
    if (!ok)
      return false;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return true;
}

// Parses a flat JSON object into key -> token. Returns an error or "".
std::string parse_object(std::string_view s, std::map<std::string, token>* out) {
  std::size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
  };
  auto string_at = [&](std::string* dst) -> bool { // s[i] == '"'
    ++i;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) {
        const char e = s[++i];
        if (e == 'u' && i + 4 < s.size()) { // \u00XX only: we never write more
          unsigned v = 0;
          std::from_chars(s.data() + i + 1, s.data() + i + 5, v, 16);
          *dst += static_cast<char>(v);
          i += 4;
        } else {
          *dst += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        }
      } else {
        *dst += s[i];
      }
      ++i;
    }
    if (i >= s.size())
      return false;
    ++i; // closing quote
    return true;
  };
  ws();
  if (i >= s.size() || s[i] != '{')
    return "expected a JSON object";
  ++i;
  for (;;) {
    ws();
    if (i < s.size() && s[i] == '}')
      break;
    std::string key;
    if (i >= s.size() || s[i] != '"' || !string_at(&key))
      return "expected a quoted key at byte " + std::to_string(i);
    ws();
    if (i >= s.size() || s[i] != ':')
      return "expected ':' after key '" + key + "'";
    ++i;
    ws();
    token t;
    if (i < s.size() && s[i] == '"') {
      t.is_string = true;
      if (!string_at(&t.text))
        return "unterminated string for key '" + key + "'";
    } else {
      const std::size_t start = i;
      while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ' ' && s[i] != '\n' && s[i] != '\t' &&
             s[i] != '\r')
        ++i;
      t.text = std::string(s.substr(start, i - start));
      if (t.text.empty() || t.text[0] == '{' || t.text[0] == '[')
        return "unsupported value for key '" + key + "' (only numbers, strings, booleans)";
    }
    (*out)[key] = std::move(t);
    ws();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}')
      break;
    return "expected ',' or '}' after key '" + key + "'";
  }
  return {};
}

bool fail(std::string* err, const std::string& msg) {
  if (err)
    *err = msg;
  return false;
}

std::string to_json(const synthetic_meta& meta) {
  std::string out = "{\n";
  bool first = true;
  visit_fields(meta, [&](const char* key, const auto& field) {
    out += first ? "  \"" : ",\n  \"";
    first = false;
    out += key;
    out += "\": ";
    put(out, field);
  });
  out += "\n}\n";
  return out;
}

} // namespace

// Shortest round-trip formatting is one-to-one on doubles, so equal text
// means equal values (and NaN, written as null, equals NaN here).
bool operator==(const synthetic_meta& a, const synthetic_meta& b) {
  return a.options.rows == b.options.rows && to_json(a) == to_json(b);
}

bool operator==(const synthetic_options& a, const synthetic_options& b) {
  synthetic_meta ma, mb;
  ma.options = a;
  mb.options = b;
  return ma == mb;
}

bool write_meta(const std::string& path, const synthetic_meta& meta, std::string* err) {
  const std::string out = to_json(meta);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f)
    return fail(err, "cannot open '" + path + "' for writing: " + std::strerror(errno));
  const bool wrote = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !wrote)
    return fail(err, "cannot write '" + path + "': " + std::strerror(wrote ? errno : saved));
  return true;
}

std::optional<synthetic_meta> read_meta(const std::string& path, std::string* err) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    fail(err, "cannot open '" + path + "': " + std::strerror(errno));
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    text.append(buf, n);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) {
    fail(err, "cannot read '" + path + "'");
    return std::nullopt;
  }
  return parse_meta(text, path, err);
}

std::optional<synthetic_meta> parse_meta(std::string_view text, const std::string& path,
                                         std::string* err) {
  std::map<std::string, token> tokens;
  if (auto e = parse_object(text, &tokens); !e.empty()) {
    fail(err, path + ": " + e);
    return std::nullopt;
  }
  for (const char* key : required_keys)
    if (!tokens.count(key)) {
      fail(err, path + ": missing key '" + key + "'");
      return std::nullopt;
    }
  synthetic_meta m;
  std::string bad;
  visit_fields(m, [&](const char* key, auto& field) {
    const auto it = tokens.find(key);
    if (it != tokens.end() && !get(it->second, &field) && bad.empty())
      bad = key;
  });
  if (!bad.empty()) {
    fail(err, path + ": bad value for key '" + bad + "'");
    return std::nullopt;
  }
  if (m.format != synthetic_meta_format) {
    fail(err, path + ": format is '" + m.format + "', expected '" + synthetic_meta_format + "'");
    return std::nullopt;
  }
  if (m.version > synthetic_meta_version) {
    fail(err, path + ": version " + std::to_string(m.version) + " is newer than this build reads (" +
                  std::to_string(synthetic_meta_version) + ")");
    return std::nullopt;
  }
  m.options.rows = m.rows;
  return m;
}

} // namespace data
