#include "config/options.hpp"

#include <algorithm>

#include "config/option_values.hpp"

namespace runtime {

using namespace detail;

std::vector<std::string> option_set::groups() const {
  std::vector<std::string> out;
  for (const auto& e : entries_)
    for (auto dot = e.spec.key.find('.'); dot != npos; dot = e.spec.key.find('.', dot + 1))
      if (std::find(out.begin(), out.end(), e.spec.key.substr(0, dot)) == out.end())
        out.push_back(e.spec.key.substr(0, dot));
  return out;
}

std::string option_set::unknown_key(const std::string& key, const std::string& where) const {
  std::string msg = "unknown option '" + key + "' (" + where + ")";
  // Closest key by edit distance, also matching a bare name ("batch-size").
  std::string low = lower(key);
  std::size_t best = npos;
  const std::string* best_key = nullptr;
  for (const auto& e : entries_) {
    auto d = std::min(edit_distance(low, e.spec.key), edit_distance(low, name_of(e.spec.key)));
    if (d < best) {
      best = d;
      best_key = &e.spec.key;
    }
  }
  if (best_key && best <= std::clamp<std::size_t>(key.size() / 4, 1, 3))
    return msg + "; did you mean '" + *best_key + "'?";
  std::vector<std::string> siblings;
  if (key.find('.') != npos)
    for (const auto& e : entries_)
      if (group_of(e.spec.key) == group_of(key))
        siblings.push_back(e.spec.key);
  if (!siblings.empty())
    return msg + "; options in [" + group_of(key) + "]: " + join(siblings);
  return msg + "; known groups: " + join(groups(), "[", "]");
}

std::string option_set::unknown_group(const std::string& group, const std::string& where) const {
  std::string msg = "unknown group '[" + group + "]' (" + where + ")";
  std::string low = lower(group);
  auto known = groups();
  std::size_t best = npos;
  const std::string* best_group = nullptr;
  for (const auto& g : known)
    if (auto d = edit_distance(low, g); d < best) {
      best = d;
      best_group = &g;
    }
  if (best_group && best <= std::clamp<std::size_t>(group.size() / 4, 1, 3))
    return msg + "; did you mean '[" + *best_group + "]'?";
  return msg + "; known groups: " + join(known, "[", "]");
}

std::string option_set::help_text(const std::string& usage_line) const {
  std::string out = usage_line + "\n\n"
      "Options come from an INI file ([group] sections of 'key = value' lines)\n"
      "and from the command line (--group.key=value), which overrides the file.\n"
      "A boolean may be given as a bare --group.flag (meaning true).\n\n"
      "  -h, --help\n      print this help and exit\n"
      "  --config-file=PATH\n      read options from this INI file (it must exist)\n";
  std::vector<std::string> leaf_groups;
  for (const auto& e : entries_)
    if (std::find(leaf_groups.begin(), leaf_groups.end(), group_of(e.spec.key)) ==
        leaf_groups.end())
      leaf_groups.push_back(group_of(e.spec.key));
  for (const auto& g : leaf_groups) {
    out += "\n[" + g + "]\n";
    for (const auto& e : entries_) {
      if (group_of(e.spec.key) != g)
        continue;
      out += "  --" + e.spec.key + "=<" + to_string(e.spec.type) + ">  (default: " +
             format_value(e.def);
      if (auto c = constraint_text(e.spec); !c.empty())
        out += "; " + c;
      out += ")\n      " + one_line(e.spec.help) + "\n";
    }
  }
  return out;
}

std::string option_set::effective_ini() const {
  std::string out = "; Effective configuration: every option with the value in use.\n"
                    "; Run again with --config-file=<this file>.\n";
  for (const auto& g : groups()) { // keeps groups together even if added interleaved
    bool header = false;
    for (const auto& e : entries_) {
      if (group_of(e.spec.key) != g || (e.spec.omit_default_from_ini && e.source == "default"))
        continue;
      if (!header) {
        out += "\n[" + g + "]\n";
        header = true;
      }
      if (!e.spec.help.empty())
        out += "; " + one_line(e.spec.help) + "\n";
      std::string c = constraint_text(e.spec);
      out += "; " + std::string(to_string(e.spec.type)) + (c.empty() ? "" : ", " + c) +
             ", default " + format_value(e.def) + ", from " + one_line(e.source) + "\n";
      out += name_of(e.spec.key) + " = " + format_value(e.val) + "\n";
    }
  }
  return out;
}

} // namespace runtime
