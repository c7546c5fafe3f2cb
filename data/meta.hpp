#pragma once
// The PATH.meta.json sidecar of a synthetic file: what generated it and its
// Bayes-optimal quality (DESIGN.md section 4, "how close to Bayes").
//
// Format: one JSON object of numbers, strings, booleans and (per-column
// missing rates, vocabulary sizes) lists of numbers, written and read with
// nlohmann-json. Reading: any key order and whitespace, unknown keys ignored,
// absent option keys keep their defaults, a value of the wrong type or range
// is refused naming the key. Non-finite numbers (e.g. bayes_ne of a file with
// no positives) are written as null and read back as NaN. Version 1 wrote
// the lists as comma-separated strings; they are still read.
#include "data/synthetic_options.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace data {

inline constexpr const char* synthetic_meta_format = "shadowsync-synthetic";
inline constexpr std::uint64_t synthetic_meta_version = 2;

// All losses are in nats, averaged over the file's rows.
struct synthetic_meta {
  std::string format = synthetic_meta_format;
  std::uint64_t version = synthetic_meta_version;
  std::uint64_t rows = 0;
  double positive_rate = 0.0;          // mean label
  double mean_probability = 0.0;       // mean true probability p_i
  double bayes_logloss = 0.0;          // mean -[y ln p + (1 - y) ln(1 - p)], true p
  double bayes_expected_logloss = 0.0; // mean binary entropy H(p_i)
  double base_entropy = 0.0;           // H(positive_rate)
  double bayes_ne = 0.0;               // bayes_logloss / base_entropy
  double teacher_bias = 0.0;           // the calibrated bias of the teacher's logit
  std::array<std::uint64_t, synthetic_num_cat> vocab_sizes{}; // C1..C26
  synthetic_options options;           // everything that generated the file
};

// Exact equality of every field (NaN equals NaN here, as both are "null").
bool operator==(const synthetic_meta& a, const synthetic_meta& b);
bool operator==(const synthetic_options& a, const synthetic_options& b);

// The sidecar's path for a data file: data_path + ".meta.json".
inline std::string meta_path_for(const std::string& data_path) { return data_path + ".meta.json"; }

// Writes (replaces) the sidecar at `path`. Doubles are written in shortest
// round-trip form, so read_meta(write_meta(m)) == m. On failure returns false
// and sets *err (when non-null) to a message naming the path.
bool write_meta(const std::string& path, const synthetic_meta& meta, std::string* err);

// Reads a sidecar. format must be "shadowsync-synthetic", version at most
// synthetic_meta_version, and rows, positive_rate, bayes_logloss and bayes_ne
// present. On failure returns nullopt and sets *err naming the path.
std::optional<synthetic_meta> read_meta(const std::string& path, std::string* err);

// read_meta's parsing and checks on text already read; `path` names it in
// messages.
std::optional<synthetic_meta> parse_meta(std::string_view text, const std::string& path,
                                         std::string* err);

} // namespace data
