#pragma once
// The report page's tables (report_page.hpp describes the page): each
// returns an HTML fragment with every text from a run escaped; `names` are
// the runs' legend names, one per run, in the same order.
#include <string>
#include <vector>

#include "report/run_folder.hpp"

namespace runtime {

// The summary: one row per main value of metrics.json that some run has
// (an empty cell: "&ndash;"), one column per run, and a last row naming
// the files each run had.
std::string summary_table(const std::vector<run_folder>& runs,
                          const std::vector<std::string>& names);

// With several runs, the settings whose values differ (or "None"); then
// each run's config.ini in full, folded.
std::string settings_section(const std::vector<run_folder>& runs,
                             const std::vector<std::string>& names);

} // namespace runtime
