#include "model/sync_rules.hpp"

namespace model {

std::optional<sync_algorithm> parse_sync_algorithm(const std::string& name) {
  for (auto a : {sync_algorithm::none, sync_algorithm::s_easgd, sync_algorithm::s_ma,
                 sync_algorithm::s_bmuf, sync_algorithm::fr_easgd, sync_algorithm::fr_ma,
                 sync_algorithm::fr_bmuf})
    if (to_string(a) == name)
      return a;
  return std::nullopt;
}

std::string to_string(sync_algorithm a) {
  switch (a) {
    case sync_algorithm::none: return "none";
    case sync_algorithm::s_easgd: return "s-easgd";
    case sync_algorithm::s_ma: return "s-ma";
    case sync_algorithm::s_bmuf: return "s-bmuf";
    case sync_algorithm::fr_easgd: return "fr-easgd";
    case sync_algorithm::fr_ma: return "fr-ma";
    case sync_algorithm::fr_bmuf: return "fr-bmuf";
  }
  return "none";
}

std::optional<merge_mode> parse_merge_mode(const std::string& name) {
  if (name == "delta")
    return merge_mode::delta;
  if (name == "overwrite")
    return merge_mode::overwrite;
  return std::nullopt;
}

std::vector<range> split_range(std::size_t n, std::size_t parts) {
  std::vector<range> out(parts);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    out[i].offset = offset;
    out[i].size = n / parts + (i < n % parts ? 1 : 0);
    offset += out[i].size;
  }
  return out;
}

void easgd_centre_step(float* centre, const float* w, float alpha, float* delta, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float d = alpha * (w[i] - centre[i]);
    centre[i] += d;
    delta[i] = d;
  }
}

void bmuf_step(const bmuf_params& p, float* global, float* momentum, float* start,
               const float* avg, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float g = avg[i] - start[i];
    momentum[i] = p.eta * momentum[i] + p.zeta * g;
    global[i] += momentum[i];
    start[i] = p.nesterov ? global[i] + p.eta * momentum[i] : global[i];
  }
}

void merge(merge_mode mode, float* w, const float* snapshot, const float* target, std::size_t n) {
  if (mode == merge_mode::overwrite) {
    for (std::size_t i = 0; i < n; ++i)
      w[i] = target[i];
    return;
  }
  // An entry the round did not see change (w == snapshot: every entry of a
  // foreground round, whose workers wait) takes the target exactly: w +
  // (target - w) can miss it by a rounding, and then the bits of a run would
  // follow how many rounds happen to run after the training's end.
  for (std::size_t i = 0; i < n; ++i)
    w[i] = w[i] == snapshot[i] ? target[i] : w[i] + (target[i] - snapshot[i]);
}

} // namespace model
