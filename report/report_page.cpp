#include "report/report_page.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "report/report_page_tables.hpp"

namespace runtime {

namespace {

using json = nlohmann::json;

// Run colours: fixed, so that nothing from a run reaches a style attribute.
const char* const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                               "#9467bd", "#8c564b", "#e377c2", "#17becf"};
const char* colour(std::size_t i) { return palette[i % (sizeof palette / sizeof *palette)]; }

std::string run_name(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/')
    d.pop_back();
  const auto slash = d.find_last_of('/');
  return slash == std::string::npos ? d : d.substr(slash + 1);
}

// Folder names as the legend shows them: the last part, or the whole path
// when two runs share it.
std::vector<std::string> run_names(const std::vector<run_folder>& runs) {
  std::vector<std::string> names;
  for (const auto& r : runs)
    names.push_back(run_name(r.dir));
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = 0; j < names.size(); ++j)
      if (i != j && run_name(runs[i].dir) == run_name(runs[j].dir))
        names[i] = runs[i].dir;
  return names;
}

// A setting's value as a number (integers as written in config.ini).
std::optional<long> setting_count(const run_folder& run, const std::string& key) {
  const auto v = run.setting(key);
  if (!v || v->empty())
    return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  return *end == '\0' && n >= 0 ? std::optional<long>(n) : std::nullopt;
}

std::string legend(const std::vector<std::string>& names) {
  std::string out = "<ul class=\"legend\">";
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::string("<li><span class=\"swatch\" style=\"background:") + colour(i) +
           "\"></span>" + html_escape(names[i]) + "</li>";
  return out + "</ul>\n";
}

// The script's data: per run its name, colour, clock, time series and hosts.
json page_data(const std::vector<run_folder>& runs, const std::vector<std::string>& names) {
  json out = {{"runs", json::array()}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    json tl = {{"time_s", json::array()},      {"examples_per_s", json::array()},
               {"train_ne", json::array()},    {"sync_gap", json::array()},
               {"bytes", json::array()},       {"blocked_fraction", json::array()}};
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    for (const auto& row : r.timeline) {
      tl["time_s"].push_back(row.time_s);
      tl["examples_per_s"].push_back(row.examples_per_s);
      tl["train_ne"].push_back(opt(row.train_ne));
      tl["sync_gap"].push_back(opt(row.sync_gap));
      tl["bytes"].push_back(row.bytes);
      tl["blocked_fraction"].push_back(opt(row.blocked_fraction));
    }
    json hosts = json::array();
    const json::json_pointer util("/sim/core_utilisation");
    if (r.metrics.is_object() && r.metrics.contains(util) && r.metrics.at(util).is_array()) {
      const auto& shares = r.metrics.at(util);
      const auto labels = host_labels(r, shares.size());
      for (std::size_t h = 0; h < shares.size(); ++h)
        if (shares[h].is_number())
          hosts.push_back({{"label", labels[h]}, {"share", shares[h]}});
    }
    // The timeline's host_busy_H columns: one series per host with a value.
    std::size_t n_hosts = 0;
    for (const auto& row : r.timeline)
      n_hosts = std::max(n_hosts, row.host_busy.size());
    json host_busy = json::array();
    const auto host_names = host_labels(r, n_hosts);
    for (std::size_t h = 0; h < n_hosts; ++h) {
      json busy = json::array();
      bool any = false;
      for (const auto& row : r.timeline) {
        const bool known = h < row.host_busy.size() && row.host_busy[h];
        busy.push_back(known ? json(*row.host_busy[h]) : json(nullptr));
        any = any || known;
      }
      if (any)
        host_busy.push_back({{"label", host_names[h]}, {"busy", busy}});
    }
    const bool virtual_clock = r.metrics.is_object() && r.metrics.contains("sim") &&
                               r.metrics["sim"].is_object();
    out["runs"].push_back({{"name", names[i]},
                           {"color", colour(i)},
                           {"virtual", virtual_clock},
                           {"timeline", tl},
                           {"hosts", hosts},
                           {"host_busy", host_busy}});
  }
  return out;
}

// One chart's frame; the script draws into the <svg>.
std::string chart(const char* field, const char* title, bool from_zero) {
  return std::string("<figure class=\"chart\"><figcaption>") + title +
         "</figcaption><svg class=\"plot\" data-field=\"" + field + "\" data-zero=\"" +
         (from_zero ? "1" : "0") + "\" viewBox=\"0 0 640 260\" width=\"640\" height=\"260\" "
         "role=\"img\"></svg></figure>\n";
}

} // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  return out;
}

std::string script_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) // these appear only inside JSON strings, where \u escapes mean the same
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  return out;
}

std::vector<std::string> host_labels(const run_folder& run, std::size_t hosts) {
  std::vector<std::string> out;
  const auto t = setting_count(run, "cluster.trainers");
  const auto e = setting_count(run, "cluster.embedding-shards");
  const auto d = setting_count(run, "cluster.dense-shards");
  const bool one_host = run.setting("sim.placement") == std::optional<std::string>("\"one-host\"");
  for (std::size_t h = 0; h < hosts; ++h) {
    const long i = long(h);
    if (one_host)
      out.push_back(h == 0 ? "host 0 (every role)" : "host " + std::to_string(h) + " (idle)");
    else if (t && i < *t)
      out.push_back("trainer " + std::to_string(i));
    else if (t && e && i < *t + *e)
      out.push_back("embedding shard " + std::to_string(i - *t));
    else if (t && e && d && i < *t + *e + *d)
      out.push_back("dense shard " + std::to_string(i - *t - *e));
    else
      out.push_back("host " + std::to_string(h));
  }
  return out;
}

std::string report_page(const std::vector<run_folder>& runs) {
  const auto names = run_names(runs);
  std::string title = "ShadowSync report: ";
  for (std::size_t i = 0; i < names.size(); ++i)
    title += (i ? ", " : "") + names[i];
  std::string out =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>" +
    html_escape(title) + "</title>\n<style>" + report_page_style + "</style>\n</head><body>\n<h1>" +
    html_escape(title) + "</h1>\n" + legend(names) + "<h2>Summary</h2>\n" +
    summary_table(runs, names) + "<h2>Over time</h2>\n<div id=\"charts\">\n" +
    chart("examples_per_s", "examples/s", true) + chart("train_ne", "train NE (progressive)", false) +
    chart("sync_gap", "sync gap (mean batches between rounds)", true) +
    chart("bytes", "bytes (embedding lookups + pushes + dense sync, since the start)", true) +
    chart("blocked_fraction", "share of worker time blocked on sync", true) +
    "</div>\n<h2>Per-host busy share (virtual clock)</h2>\n<p>Core time charged on each "
    "simulated host over virtual seconds &times; its cores: over the whole run (metrics.json: "
    "sim.core_utilisation) and over time (the timeline's host_busy_H columns, between two rows; "
    "trainers solid, embedding shards dashed, dense shards dotted).</p>\n<div id=\"hosts\">"
    "<figure class=\"chart\"><svg class=\"bars\" viewBox=\"0 0 640 60\" width=\"640\" "
    "height=\"60\" role=\"img\"></svg></figure>\n<figure class=\"chart\"><figcaption>busy "
    "share of each host's cores over time</figcaption><svg class=\"hostplot\" viewBox=\"0 0 "
    "640 260\" width=\"640\" height=\"260\" role=\"img\"></svg></figure></div>\n"
    "<h2>Settings</h2>\n" + settings_section(runs, names) +
    "<script type=\"application/json\" id=\"report-data\">" + script_json(page_data(runs, names)) +
    "</script>\n<script>" + report_page_script + "</script>\n</body></html>\n";
  return out;
}

} // namespace runtime
