// The coordinator's side of partial recovery (see shard_recovery.hpp):
//   runtime: the new shard in place (the caller's restart hook)
//   coordinator actor -> new shard: recover; -> caller: restarted
//   coordinator actor -> trainer: rebind(shard, handle) (coordinator_restarts.cpp);
//   trainer -> workers: rebind
#include "cluster/shard_recovery.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/embedding_shard.hpp"
#include "actors/sim_host.hpp"
#include "cluster/cluster_plan.hpp"
#include "cluster/cluster_handles.hpp"

namespace runtime {

shard_recovery::shard_recovery(caf::blocking_actor* self, const cluster_handles& c,
                               restart_fn restart)
    : self_(self), c_(c), restart_(std::move(restart)) {}

void shard_recovery::start(caf::actor_clock::time_point t0) {
  t0_ = t0;
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

std::optional<std::string> shard_recovery::place(std::size_t i, const std::string& why,
                                                 std::uint64_t cut) {
  if (auto e = restart_(i, cut))
    return c_.shard_names[i] + " is down (" + why + ") and its restart failed: " + *e;
  return std::nullopt;
}

void shard_recovery::restarted(std::size_t i, const shard_restart& r) {
  using tp = caf::actor_clock::time_point;
  const tp down{std::chrono::nanoseconds(r.down_ns)};
  // (Under the virtual clock the reply reaches the coordinator at once; the
  // shard itself is busy until it is ready, and serves nothing before.)
  const auto back = std::max(tp{std::chrono::nanoseconds(r.reply_ns)},
                             tp{std::chrono::nanoseconds(r.ready_ns)});
  const double at = seconds(down);
  const bool had_save = r.newest_save_ns != std::numeric_limits<std::int64_t>::min();
  // (A save from before training started, the shard's first one, holds
  // what it held at 0 s.)
  const double saved_at =
    had_save ? std::max(0.0, seconds(caf::actor_clock::time_point{
                               std::chrono::nanoseconds(r.newest_save_ns)}))
             : 0.0;
  outage_ += seconds(back) - at;
  char line[256];
  std::snprintf(line, sizeof line,
                "%s lost at %.3f s, restarted from %s%.3f s (%llu save(s), %llu bytes) in %.3f s",
                c_.shard_names[i].c_str(), at, had_save ? "its save of " : "its initial rows at ",
                saved_at, static_cast<unsigned long long>(r.saves),
                static_cast<unsigned long long>(r.bytes), seconds(back) - at);
  spdlog::warn("{}", line);
  // The examples since the save are counted at the end (report), when the
  // progress samples after the failure are in too.
  losses_.push_back(loss{line, saved_at, at});
}

void shard_recovery::report(run_metrics& out) const {
  if (!out.recovery)
    out.recovery.emplace();
  auto& m = *out.recovery;
  m.failures = losses_.size();
  m.events.clear();
  double window = 0;
  for (const auto& l : losses_) {
    const double w = std::max(0.0, examples_at(l.at) - examples_at(l.saved_at));
    window += w;
    char more[64];
    std::snprintf(more, sizeof more, "; %.0f examples since then", w);
    m.events.push_back(l.event + more);
  }
  m.outage_seconds = outage_;
  m.lost_examples = c_.shards.empty() ? 0.0 : window / double(c_.shards.size());
  m.pls = out.examples > 0 ? m.lost_examples / double(out.examples) : 0.0;
}

// recovery.mode=partial: embedding shard i again, in the lost one's place;
// the coordinator actor has it reload its own newest save
// (cluster/shard_recovery.hpp).
void place_shard(caf::actor_system& sys, const train_config& cfg,
                 const std::shared_ptr<actors::cpr_counters>& cpr, cluster_handles& c,
                 std::size_t i, std::uint64_t cut) {
  auto ec = embedding_shard_config_for(cfg, i);
  ec.cpr.counters = cpr;
  ec.cuts_over = cut;
  // As actors::spawn_role, but started by its first message, the
  // coordinator's reload request: the shard initialises and reloads in one
  // go, as when its restart was one blocking request.
  const auto host = placement_for(cfg).host_of_embedding(i);
  auto* fabric = actors::fabric_of(sys);
  if (!fabric) {
    c.shards[i] = sys.spawn<caf::lazy_init>(actors::embedding_shard, std::move(ec));
    return;
  }
  using impl = caf::infer_impl_from_fun_t<decltype(&actors::embedding_shard)>;
  caf::actor_config ac;
  caf::detail::init_fun_factory<impl, decltype(&actors::embedding_shard)> fac;
  ac.init_fun = fac(&actors::embedding_shard, std::move(ec));
  c.shards[i] = sys.spawn_class<actors::sim_actor<impl>, caf::lazy_init>(ac);
  fabric->place(c.shards[i]->id(), host);
}

// The CPR settings and the shards' save counters into out.recovery.
void report_recovery(const train_config& cfg, const actors::cpr_counters& k, run_metrics& out) {
  if (!out.recovery)
    out.recovery.emplace();
  auto& r = *out.recovery;
  const auto& s = cfg.recovery;
  r.policy = checkpoint::to_string(s.policy);
  r.fraction = s.policy == checkpoint::cpr_policy::full ? 1.0 : s.fraction;
  r.interval_seconds = s.interval_seconds;
  r.target_pls = s.target_pls;
  r.mtbf_seconds = s.mtbf_seconds;
  r.saves = k.saves;
  r.full_saves = k.full_saves;
  r.rows_saved = k.rows;
  r.bytes = k.bytes;
  r.failed_saves = k.failed_saves;
  r.save_seconds = double(k.save_ns) * 1e-9;
  r.loads = k.loads;
  r.load_bytes = k.load_bytes;
  r.load_seconds = double(k.load_ns) * 1e-9;
  r.tracking_bytes = k.tracking_bytes;
  const double shard_seconds = out.seconds * double(cfg.cluster.embedding_shards);
  r.overhead_fraction = shard_seconds > 0 ? (r.save_seconds + r.load_seconds) / shard_seconds : 0;
  if (s.mtbf_seconds > 0 && cfg.cluster.embedding_shards > 0)
    r.predicted_pls =
      s.interval_seconds / (2.0 * s.mtbf_seconds * double(cfg.cluster.embedding_shards));
}

} // namespace runtime
