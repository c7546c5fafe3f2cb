// The report page's two tables (report_page_tables.hpp): metrics.json's main
// values per run, and the runs' settings.
#include "report/report_page_tables.hpp"

#include <cstdio>
#include <optional>
#include <set>

#include "report/report_page.hpp"

namespace runtime {

namespace {

using json = nlohmann::json;

enum class shown { text, number, percent, megabytes };
struct summary_row {
  const char* label;
  const char* pointer; // into metrics.json
  shown how;
};
const summary_row summary_rows[] = {
  {"mode", "/mode", shown::text},
  {"examples", "/examples", shown::number},
  {"training seconds", "/seconds", shown::number},
  {"examples/s", "/examples_per_second", shown::number},
  {"train NE", "/train_ne", shown::number},
  {"eval NE", "/eval_ne", shown::number},
  {"eval AUC", "/eval_auc", shown::number},
  {"eval GAUC", "/eval_gauc", shown::number},
  {"eval logloss", "/eval_logloss", shown::number},
  {"eval calibration", "/eval_calibration", shown::number},
  {"eval set's Bayes NE", "/eval_bayes_ne", shown::number},
  {"trainers", "/trainers", shown::number},
  {"workers per trainer", "/workers_per_trainer", shown::number},
  {"sync algorithm", "/sync/algorithm", shown::text},
  {"sync rounds", "/sync/rounds", shown::number},
  {"sync gap (mean batches)", "/sync/sync_gap_mean", shown::number},
  {"worker time blocked on sync", "/sync/worker_blocked_fraction", shown::percent},
  {"dense sync", "/sync/bytes", shown::megabytes},
  {"embedding lookups", "/bytes/lookup", shown::megabytes},
  {"embedding pushes", "/bytes/push", shown::megabytes},
  {"virtual seconds (whole run)", "/sim/virtual_seconds", shown::number},
  {"malformed lines", "/malformed_lines", shown::number},
  {"bags cut to data.max-ids", "/cut_bags", shown::number},
  {"stopped by", "/stopped_by", shown::text},
};

// One summary cell: empty when the run lacks the value.
std::string cell(const json& metrics, const summary_row& row) {
  if (!metrics.is_object())
    return {};
  const json::json_pointer p(row.pointer);
  if (!metrics.contains(p) || metrics.at(p).is_null())
    return {};
  const json& v = metrics.at(p);
  if (!v.is_number())
    return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, json::error_handler_t::replace);
  char s[64];
  const double x = v.get<double>();
  if (row.how == shown::percent)
    std::snprintf(s, sizeof s, "%.2f %%", 100 * x);
  else if (row.how == shown::megabytes)
    std::snprintf(s, sizeof s, "%.2f MB", x / 1e6);
  else if (v.is_number_integer() || v.is_number_unsigned())
    return v.dump();
  else
    std::snprintf(s, sizeof s, "%.6g", x);
  return s;
}

} // namespace

std::string summary_table(const std::vector<run_folder>& runs,
                          const std::vector<std::string>& names) {
  std::string out = "<table class=\"summary\"><tr><th></th>";
  for (const auto& n : names)
    out += "<th>" + html_escape(n) + "</th>";
  out += "</tr>\n";
  for (const auto& row : summary_rows) {
    std::vector<std::string> cells;
    bool any = false;
    for (const auto& r : runs) {
      cells.push_back(cell(r.metrics, row));
      any = any || !cells.back().empty();
    }
    if (!any)
      continue;
    out += std::string("<tr><th>") + html_escape(row.label) + "</th>";
    for (const auto& c : cells)
      out += "<td>" + (c.empty() ? std::string("&ndash;") : html_escape(c)) + "</td>";
    out += "</tr>\n";
  }
  out += "<tr><th>files</th>";
  for (const auto& r : runs)
    out += std::string("<td>config.ini") + (r.metrics.is_null() ? "" : ", metrics.json") +
           (r.has_timeline ? ", timeline.csv" : "") +
           (r.metrics.is_null() ? " (no metrics.json: the run had not finished)" : "") + "</td>";
  return out + "</tr>\n</table>\n";
}

std::string settings_section(const std::vector<run_folder>& runs,
                             const std::vector<std::string>& names) {
  std::string out;
  if (runs.size() > 1) {
    std::vector<std::string> keys; // every key, in first-seen order
    std::set<std::string> seen;
    for (const auto& r : runs)
      for (const auto& s : r.settings)
        if (seen.insert(s.key).second)
          keys.push_back(s.key);
    std::string rows;
    for (const auto& k : keys) {
      std::vector<std::optional<std::string>> vs;
      for (const auto& r : runs)
        vs.push_back(r.setting(k));
      bool differ = false;
      for (const auto& v : vs)
        differ = differ || v != vs.front();
      if (!differ)
        continue;
      rows += "<tr><th>" + html_escape(k) + "</th>";
      for (const auto& v : vs)
        rows += "<td>" + (v ? html_escape(*v) : std::string("&ndash;")) + "</td>";
      rows += "</tr>\n";
    }
    out += "<h3>Settings that differ</h3>\n";
    if (rows.empty()) {
      out += "<p>None: the runs have the same settings.</p>\n";
    } else {
      out += "<table class=\"settings\"><tr><th></th>";
      for (const auto& n : names)
        out += "<th>" + html_escape(n) + "</th>";
      out += "</tr>\n" + rows + "</table>\n";
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out += "<details><summary>" + html_escape(names[i]) + ": config.ini (" +
           std::to_string(runs[i].settings.size()) + " settings)</summary>\n"
           "<table class=\"settings\">\n";
    for (const auto& s : runs[i].settings)
      out += "<tr><th>" + html_escape(s.key) + "</th><td>" + html_escape(s.value) + "</td></tr>\n";
    out += "</table></details>\n";
  }
  return out;
}

} // namespace runtime
