#pragma once
// The report page (`shadowsync report RUN_DIR... --out=PAGE.html`): one
// self-contained HTML file from run folders (report/run_folder.hpp), for a
// browser with no network. It holds
//   - a legend: one colour per run (the folder's name);
//   - the summary: a table of metrics.json's main values, one column per run
//     (rows no run has are left out);
//   - charts over time from timeline.csv (examples/s, train NE, sync gap,
//     bytes, blocked share of worker time), the runs overlaid, drawn as SVG
//     by the page's own script; and the per-host busy share of the cores on
//     the virtual clock (metrics.json's sim.core_utilisation, hosts named by
//     role from cluster.trainers, cluster.embedding-shards,
//     cluster.dense-shards and sim.placement), and the same share over
//     time from timeline.csv's host_busy_H columns (one line per run and
//     host);
//   - the settings: those that differ between the runs, then each run's
//     config.ini in full.
// After drawing, the script sets on <body> data-charts-drawn (charts with
// data), data-series (lines and bar groups drawn) and data-points (the
// series' points and the bars); an error in the script sets
// data-script-error. A line of more than 2000 points is drawn through the
// lowest and highest point of each of 1000 slices of its time axis.
//
// Nothing from a run reaches the page unescaped: text in the HTML goes
// through html_escape(), the data for the script is JSON inside a
// <script type="application/json"> with '<', '>' and '&' written as \u
// escapes (so no "</script>" can close it), and the script inserts every
// string as text (textContent), never as markup. A Content-Security-Policy
// <meta> allows inline styles and scripts only: the page loads nothing.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run_folder.hpp"

namespace runtime {

// The page for `runs` (at least one), in the order given.
std::string report_page(const std::vector<run_folder>& runs);

// & < > " ' as character references.
std::string html_escape(const std::string& s);

// `j` as JSON text that is safe inside a <script> element (see above);
// invalid UTF-8 in strings becomes U+FFFD.
std::string script_json(const nlohmann::json& j);

// A name for each of `hosts` simulated hosts of `run` ("trainer 0",
// "embedding shard 1", "dense shard 0"; with sim.placement = one-host,
// "host 0 (every role)"; "host N" when the settings do not say).
std::vector<std::string> host_labels(const run_folder& run, std::size_t hosts);

// The page's script and style sheet (report/report_page_script.cpp).
extern const char* const report_page_script;
extern const char* const report_page_style;

} // namespace runtime
