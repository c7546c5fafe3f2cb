#pragma once
// The dense synchronisation rules of DESIGN.md section 3 as pure functions on
// flat float ranges, used by the dense shard and the shadow syncer and checked
// directly by the tests. N trainers, replica w_i, centre c, block momentum.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace model {

enum class sync_algorithm { none, s_easgd, s_ma, s_bmuf, fr_easgd, fr_ma, fr_bmuf };
enum class merge_mode { delta, overwrite };

std::optional<sync_algorithm> parse_sync_algorithm(const std::string& name);
std::string to_string(sync_algorithm a);
inline bool is_foreground(sync_algorithm a) {
  return a == sync_algorithm::fr_easgd || a == sync_algorithm::fr_ma || a == sync_algorithm::fr_bmuf;
}
inline bool is_easgd(sync_algorithm a) {
  return a == sync_algorithm::s_easgd || a == sync_algorithm::fr_easgd;
}
inline bool is_bmuf(sync_algorithm a) {
  return a == sync_algorithm::s_bmuf || a == sync_algorithm::fr_bmuf;
}
inline bool uses_ring(sync_algorithm a) {
  return a == sync_algorithm::s_ma || a == sync_algorithm::fr_ma || is_bmuf(a);
}
std::optional<merge_mode> parse_merge_mode(const std::string& name);

// Splits [0, n) into `parts` contiguous ranges whose sizes differ by at most
// one (the first n % parts ranges are one longer). Used for dense shards and
// for the chunks of the ring all-reduce. Ranges may be empty when parts > n.
struct range {
  std::size_t offset = 0, size = 0;
};
std::vector<range> split_range(std::size_t n, std::size_t parts);

// EASGD, at the dense shard: d = alpha (w - c); c += d. Writes d into `delta`.
// The syncer then applies w -= d to its live replica.
void easgd_centre_step(float* centre, const float* w, float alpha, float* delta, std::size_t n);

// Block momentum (BMUF, Chen & Huo 2016) on the all-reduced average `avg`.
// `start` is where this block's training started (the previous target; the
// initial model before the first round):
//   G = avg - start; Delta = eta Delta + zeta G; w_g += Delta;
//   target = w_g + eta Delta (Nesterov) or w_g (classic); start = target.
// With Nesterov, measuring G from w_g instead of from the block's start point
// would count eta Delta twice (Delta then never decays and training
// diverges); with classic BMUF both are the same since start == w_g.
struct bmuf_params {
  float eta = 0.75f;  // block momentum; 1 - 1/N is a good default
  float zeta = 1.0f;  // block learning rate
  bool nesterov = true;
};
// On return `start` holds the new target.
void bmuf_step(const bmuf_params& p, float* global, float* momentum, float* start,
               const float* avg, std::size_t n);

// Merge `target` into the live replica w, given the snapshot the round used:
//   delta:     w += target - snapshot   (keeps the updates made during the round)
//   overwrite: w = target               (loses them)
void merge(merge_mode mode, float* w, const float* snapshot, const float* target, std::size_t n);

} // namespace model
