#include "config/faults.hpp"

#include <charconv>
#include <cmath>

namespace runtime {

namespace {

bool parse_number(const std::string& s, double* out) {
  if (s.empty())
    return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc{} && p == end && std::isfinite(*out);
}

// "2.5s" -> 2.5; false unless a finite number followed by 's'.
bool parse_seconds(const std::string& s, double* out) {
  return !s.empty() && s.back() == 's' && parse_number(s.substr(0, s.size() - 1), out);
}

fault_event::action action_of(const std::string& key) {
  if (key == "faults.freeze")
    return fault_event::action::freeze;
  if (key == "faults.slow-nic")
    return fault_event::action::slow_nic;
  return fault_event::action::kill;
}

const char* form_of(fault_event::action a) {
  switch (a) {
    case fault_event::action::freeze:
      return "ROLE@WHEN+DURATION";
    case fault_event::action::slow_nic:
      return "ROLE@WHEN+DURATION*FACTOR";
    default:
      return "ROLE@WHEN";
  }
}

} // namespace

std::optional<std::string> parse_faults(const std::string& key,
                                        const std::vector<std::string>& entries,
                                        std::vector<fault_event>& out) {
  const auto what = action_of(key);
  for (const auto& e : entries) {
    auto bad = [&](const std::string& why) {
      std::string s = "option '" + key + "': entry '" + e + "': " + why + " (expected " +
                      form_of(what) +
                      ": ROLE trainer-N, embedding-shard-N or dense-shard-N; WHEN a fraction "
                      "of the examples such as 0.5, or a time such as 12.5s";
      if (what != fault_event::action::kill)
        s += "; DURATION a time such as 2s";
      if (what == fault_event::action::slow_nic)
        s += "; FACTOR the NIC's share of its bandwidth in (0, 1], such as 0.1";
      return s + ")";
    };
    fault_event k;
    k.what = what;
    k.text = key + " entry '" + e + "'";
    const auto at = e.find('@');
    if (at == std::string::npos)
      return bad("no '@'");
    const std::string who = e.substr(0, at);
    std::string when = e.substr(at + 1);
    if (what != fault_event::action::kill) {
      const auto plus = when.find('+');
      if (plus == std::string::npos)
        return bad("no '+DURATION'");
      std::string dur = when.substr(plus + 1);
      when = when.substr(0, plus);
      if (what == fault_event::action::slow_nic) {
        const auto star = dur.find('*');
        if (star == std::string::npos)
          return bad("no '*FACTOR'");
        const auto f = dur.substr(star + 1);
        if (!parse_number(f, &k.factor) || k.factor <= 0 || k.factor > 1)
          return bad("factor '" + f + "' is not a number in (0, 1]");
        dur = dur.substr(0, star);
      }
      if (!parse_seconds(dur, &k.duration) || k.duration <= 0)
        return bad("duration '" + dur + "' is not a number of seconds > 0 such as 2s");
    }
    const auto dash = who.rfind('-');
    if (dash == std::string::npos)
      return bad("no role index");
    const std::string name = who.substr(0, dash), idx = who.substr(dash + 1);
    if (name == "trainer")
      k.kind = fault_event::role::trainer;
    else if (name == "embedding-shard")
      k.kind = fault_event::role::embedding_shard;
    else if (name == "dense-shard")
      k.kind = fault_event::role::dense_shard;
    else
      return bad("unknown role '" + name + "'");
    double index = 0;
    if (!parse_number(idx, &index) || index < 0 || index != std::floor(index))
      return bad("role index '" + idx + "' is not a whole number");
    k.index = std::size_t(index);
    k.who = who;
    double v = 0;
    if (!when.empty() && when.back() == 's') {
      if (!parse_seconds(when, &v) || v < 0)
        return bad("time '" + when + "' is not a number of seconds >= 0");
      k.seconds = v;
    } else {
      if (!parse_number(when, &v) || v <= 0 || v >= 1)
        return bad("fraction '" + when + "' is not a number in (0, 1)");
      k.fraction = v;
    }
    out.push_back(k);
  }
  return std::nullopt;
}

} // namespace runtime
