#include "runtime/faults.hpp"

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

} // namespace

std::optional<std::string> parse_fault_kills(const std::vector<std::string>& entries,
                                             std::vector<fault_kill>& out) {
  out.clear();
  for (const auto& e : entries) {
    auto bad = [&](const std::string& why) {
      return "option 'faults.kill': entry '" + e + "': " + why +
             " (expected ROLE@WHEN: ROLE trainer-N, embedding-shard-N or dense-shard-N; WHEN a "
             "fraction of the examples such as 0.5, or a time such as 12.5s)";
    };
    const auto at = e.find('@');
    if (at == std::string::npos)
      return bad("no '@'");
    const std::string who = e.substr(0, at), when = e.substr(at + 1);
    fault_kill k;
    k.text = e;
    const auto dash = who.rfind('-');
    if (dash == std::string::npos)
      return bad("no role index");
    const std::string name = who.substr(0, dash), idx = who.substr(dash + 1);
    if (name == "trainer")
      k.kind = fault_kill::role::trainer;
    else if (name == "embedding-shard")
      k.kind = fault_kill::role::embedding_shard;
    else if (name == "dense-shard")
      k.kind = fault_kill::role::dense_shard;
    else
      return bad("unknown role '" + name + "'");
    double index = 0;
    if (!parse_number(idx, &index) || index < 0 || index != std::floor(index))
      return bad("role index '" + idx + "' is not a whole number");
    k.index = std::size_t(index);
    double v = 0;
    if (!when.empty() && when.back() == 's') {
      if (!parse_number(when.substr(0, when.size() - 1), &v) || v < 0)
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
