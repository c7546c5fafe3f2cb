#pragma once
// A run folder (`train --output.dir=DIR`, docs/formats.md) read back for the
// report page (report/report_page.hpp):
//   DIR/config.ini     required: the run's settings ([group] and key = value
//                      lines, ';' comments), kept as written
//   DIR/metrics.json   the summary; absent while the run trains (or when it
//                      stopped before the end)
//   DIR/timeline.csv   the time series; absent in a folder written without it
// At least one of metrics.json and timeline.csv must be there.
//
// Errors are values: a string naming the file (and the line, or the column)
// and what was expected, e.g.
//   "out/a/timeline.csv:4: column 'train_ne': 'x1' is not a number".
// No CAF; reads files only in read_run_folder().
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/timeline.hpp"

namespace runtime {

struct run_setting {
  std::string key;   // "group.key"
  std::string value; // as written after '=' (strings keep their quotes)
};

struct run_folder {
  std::string dir;                    // as given on the command line
  std::vector<run_setting> settings;  // config.ini, in file order
  nlohmann::json metrics;             // metrics.json; null when absent
  bool has_timeline = false;
  std::vector<timeline_row> timeline; // timeline.csv, in file order

  // The value of setting `key` as written, if the run has it.
  std::optional<std::string> setting(const std::string& key) const;
};

// config.ini's text -> settings. `file` names it in errors: a line that is
// not a [group], a comment, blank or `key = value` inside a group.
std::optional<std::string> parse_settings(const std::string& text, const std::string& file,
                                          std::vector<run_setting>* out);

// timeline.csv's text -> rows. The header names the columns (any order;
// time_s and examples required, unknown ones ignored; host_busy_0,
// host_busy_1, ... read while they continue from 0); each row has as many
// fields as the header; empty optional fields stay absent.
std::optional<std::string> parse_timeline(const std::string& text, const std::string& file,
                                          std::vector<timeline_row>* out);

// metrics.json's text -> an object (line and column of a syntax error).
std::optional<std::string> parse_metrics(const std::string& text, const std::string& file,
                                         nlohmann::json* out);

// Reads the folder `dir` (see above) into *out.
std::optional<std::string> read_run_folder(const std::string& dir, run_folder* out);

} // namespace runtime
