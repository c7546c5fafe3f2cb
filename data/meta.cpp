#include "data/meta.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "data/json_fields.hpp"

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

using nlohmann::json;

bool fail(std::string* err, const std::string& msg) {
  if (err)
    *err = msg;
  return false;
}

// One value; non-finite doubles are written as null (nlohmann's dump does
// that) and read back as NaN.
template <class T>
void read_value(const json& v, const std::string& name, T& field) {
  if constexpr (std::is_floating_point_v<T>)
    field = v.is_null() ? std::numeric_limits<T>::quiet_NaN() : json_value<T>(v, name);
  else
    field = json_value<T>(v, name);
}

template <class T>
void read_field(const json& object, const char* key, T& field) {
  read_value(object.at(key), key, field);
}

// Lists are JSON arrays of exactly N; version 1 files wrote them as one
// comma-separated string, which is still read.
template <class T, std::size_t N>
void read_field(const json& object, const char* key, std::array<T, N>& field) {
  json list = object.at(key);
  if (list.is_string()) {
    const auto text = list.get<std::string>();
    list = json::array();
    for (std::size_t at = 0; at <= text.size();) {
      auto comma = text.find(',', at);
      if (comma == std::string::npos)
        comma = text.size();
      const auto item = text.substr(at, comma - at);
      list.push_back(item == "null" ? json(nullptr) : json::parse(item, nullptr, false));
      at = comma + 1;
    }
  }
  if (!list.is_array() || list.size() != N)
    throw std::runtime_error(std::string("field '") + key + "': expected a list of " +
                             std::to_string(N) + " numbers");
  for (std::size_t i = 0; i < N; ++i)
    read_value(list[i], std::string(key) + "[" + std::to_string(i) + "]", field[i]);
}

std::string to_json(const synthetic_meta& meta) {
  nlohmann::ordered_json j;
  visit_fields(meta, [&](const char* key, const auto& field) { j[key] = field; });
  // Written only for multi-hot data, so single-hot sidecars keep their bytes.
  if (has_multi_hot(meta.options)) {
    j["bag_sizes"] = meta.options.bag_size;
    j["bag_drawn"] = meta.options.bag_drawn;
  }
  return j.dump(2) + "\n";
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
  auto refuse = [&](const std::string& why) -> std::optional<synthetic_meta> {
    if (err)
      *err = path + ": " + why;
    return std::nullopt;
  };
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    return refuse("not valid JSON");
  if (!j.is_object())
    return refuse("expected a JSON object");
  for (const char* key : required_keys)
    if (!j.contains(key))
      return refuse(std::string("missing key '") + key + "'");
  synthetic_meta m;
  try {
    visit_fields(m, [&](const char* key, auto& field) {
      if (j.contains(key))
        read_field(j, key, field);
    });
    if (j.contains("bag_sizes"))
      read_field(j, "bag_sizes", m.options.bag_size);
    if (j.contains("bag_drawn"))
      read_field(j, "bag_drawn", m.options.bag_drawn);
  } catch (const std::exception& e) {
    return refuse(e.what());
  }
  if (m.format != synthetic_meta_format)
    return refuse("format is '" + m.format + "', expected '" + synthetic_meta_format + "'");
  if (m.version > synthetic_meta_version)
    return refuse("version " + std::to_string(m.version) + " is newer than this build reads (" +
                  std::to_string(synthetic_meta_version) + ")");
  m.options.rows = m.rows;
  return m;
}

} // namespace data
