// The coordinator's side of partial recovery (see shard_recovery.hpp):
//   runtime -> new shard: recover; new shard -> runtime: (bytes, saves, ns)
//   coordinator -> trainer: rebind(shard, handle); trainer -> workers: rebind
#include "runtime/shard_recovery.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "runtime/coordinator.hpp"

namespace runtime {

shard_recovery::shard_recovery(caf::blocking_actor* self, const cluster_handles& c,
                               restart_fn restart)
    : self_(self), c_(c), restart_(std::move(restart)) {}

void shard_recovery::start() {
  t0_ = self_->clock().now();
  samples_.assign(1, {0.0, 0.0});
}

double shard_recovery::seconds(caf::actor_clock::time_point t) const {
  return std::chrono::duration<double>(t - t0_).count();
}

void shard_recovery::sample(std::uint64_t examples) {
  samples_.emplace_back(seconds(self_->clock().now()), double(examples));
}

double shard_recovery::examples_at(double t) const {
  if (samples_.empty())
    return 0;
  if (t <= samples_.front().first)
    return samples_.front().second;
  for (std::size_t i = 1; i < samples_.size(); ++i)
    if (t <= samples_[i].first) {
      const auto [t0, e0] = samples_[i - 1];
      const auto [t1, e1] = samples_[i];
      return t1 > t0 ? e0 + (e1 - e0) * (t - t0) / (t1 - t0) : e1;
    }
  return samples_.back().second;
}

std::optional<std::string> shard_recovery::recover(std::size_t i, const std::string& why,
                                                   const std::vector<bool>& live_trainers) {
  const auto down = self_->clock().now();
  shard_restart r;
  if (auto e = restart_(i, r))
    return c_.shard_names[i] + " is down (" + why + ") and its restart failed: " + *e;
  // (Under the virtual clock the reply reaches the coordinator at once; the
  // shard itself is busy until it is ready, and serves nothing before.)
  const auto back = std::max(self_->clock().now(),
                             caf::actor_clock::time_point{std::chrono::nanoseconds(r.ready_ns)});
  auto handle = caf::actor_cast<caf::strong_actor_ptr>(c_.shards[i]);
  self_->monitor(c_.shards[i]);
  for (std::size_t t = 0; t < c_.trainers.size(); ++t)
    if (live_trainers[t])
      self_->send(c_.trainers[t], actors::rebind_atom::value, std::uint32_t(i), handle);
  const double at = seconds(down);
  const bool had_save = r.newest_save_ns != std::numeric_limits<std::int64_t>::min();
  const double saved_at =
    had_save ? seconds(caf::actor_clock::time_point{std::chrono::nanoseconds(r.newest_save_ns)})
             : 0.0;
  const double window = std::max(0.0, examples_at(at) - examples_at(saved_at));
  lost_window_ += window;
  outage_ += seconds(back) - at;
  char line[256];
  std::snprintf(line, sizeof line,
                "%s lost at %.3f s, restarted from %s%.3f s (%llu save(s), %llu bytes) in %.3f s; "
                "%.0f examples since then",
                c_.shard_names[i].c_str(), at, had_save ? "its save of " : "its initial rows at ",
                saved_at, static_cast<unsigned long long>(r.saves),
                static_cast<unsigned long long>(r.bytes), seconds(back) - at, window);
  events_.push_back(line);
  spdlog::warn("{}", line);
  return std::nullopt;
}

void shard_recovery::report(run_metrics& out) const {
  if (!out.recovery)
    out.recovery.emplace();
  auto& m = *out.recovery;
  m.failures = events_.size();
  m.events = events_;
  m.outage_seconds = outage_;
  m.lost_examples = c_.shards.empty() ? 0.0 : lost_window_ / double(c_.shards.size());
  m.pls = out.examples > 0 ? m.lost_examples / double(out.examples) : 0.0;
}

} // namespace runtime
