#include "cluster/fault_injector.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/cluster_plan.hpp"
#include "engine/input.hpp"

namespace runtime {

namespace {

// Lines of the training files times the passes (capped by train.max-examples):
// what a fraction in faults.kill refers to.
std::uint64_t training_examples(const train_config& cfg) {
  std::uint64_t lines = 0;
  for (const auto& f : reader_options_for(cfg, cfg.data.train, 0, 1).files) {
    std::ifstream in(f, std::ios::binary);
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0)
      lines += std::uint64_t(std::count(buf, buf + in.gcount(), '\n'));
  }
  auto total = lines * cfg.train.epochs;
  if (cfg.train.max_examples > 0)
    total = std::min<std::uint64_t>(total, cfg.train.max_examples);
  return total;
}

const char* verb(fault_event::action a) {
  switch (a) {
    case fault_event::action::freeze:
      return "froze";
    case fault_event::action::slow_nic:
      return "slowed the NIC of";
    default:
      return "killed";
  }
}

caf::actor_clock::duration_type to_duration(double seconds) {
  return std::chrono::duration_cast<caf::actor_clock::duration_type>(
    std::chrono::duration<double>(seconds));
}

} // namespace

std::optional<std::string> check_faults(const std::vector<fault_event>& faults,
                                        const train_config& cfg) {
  for (const auto& k : faults) {
    std::size_t have = 0;
    const char* key = "";
    switch (k.kind) {
      case fault_event::role::trainer:
        have = cfg.cluster.trainers, key = "cluster.trainers";
        break;
      case fault_event::role::embedding_shard:
        have = cfg.cluster.embedding_shards, key = "cluster.embedding-shards";
        break;
      case fault_event::role::dense_shard:
        have = model::is_easgd(cfg.sync.algorithm) ? cfg.cluster.dense_shards : 0;
        key = model::is_easgd(cfg.sync.algorithm) ? "cluster.dense-shards"
                                                  : "dense shards (EASGD only)";
        break;
    }
    if (k.index >= have)
      return "option " + k.text + " names a role the cluster does not have (" + key + " = " +
             std::to_string(have) + ")";
    if (k.what == fault_event::action::slow_nic && !cfg.net.enabled)
      return "option " + k.text + " slows a NIC of the network model, which is off "
             "(set net.enabled=true)";
  }
  return std::nullopt;
}

fault_injector::fault_injector(const train_config& cfg, const cluster_handles& c,
                               caf::blocking_actor* self, fault_targets targets)
    : pending_(cfg.sim.faults), c_(c), self_(self), targets_(targets),
      place_(placement_for(cfg)), mtbf_(cfg.recovery.faults_mtbf_seconds),
      shards_(cfg.cluster.embedding_shards), rng_(cfg.train.seed ^ 0xFA017u) {
  if (mtbf_ > 0 && shards_ > 0)
    pending_.push_back(draw_failure(0.0));
  if (std::any_of(pending_.begin(), pending_.end(), [](const auto& k) { return k.fraction; }))
    total_ = training_examples(cfg);
}

void fault_injector::start(caf::actor_clock::time_point t0) {
  if (started_) // a rollback's new attempt keeps the first zero
    return;
  started_ = true;
  start_ = t0;
  if (!targets_.engine) {
    // Wall clock: what is due at the start (a freeze or kill at 0 s) lands
    // now, before the trainers start, not at the first progress poll, which
    // a short run may never reach.
    poll(0);
    return;
  }
  // Virtual clock: a timed fault is an event of its own.
  std::vector<fault_event> timed;
  for (auto i = pending_.begin(); i != pending_.end();)
    if (i->seconds) {
      timed.push_back(std::move(*i));
      i = pending_.erase(i);
    } else {
      ++i;
    }
  for (const auto& k : timed)
    schedule(k);
}

fault_event fault_injector::draw_failure(double after) {
  const double u = (double(rng_.next() >> 11) + 0.5) * 0x1.0p-53; // in (0, 1)
  fault_event k;
  k.what = fault_event::action::kill;
  k.kind = fault_event::role::embedding_shard;
  k.index = std::size_t(rng_.next() % shards_);
  k.who = "embedding-shard-" + std::to_string(k.index);
  k.seconds = after - mtbf_ * std::log(u);
  char at[32];
  std::snprintf(at, sizeof at, "%.3fs", *k.seconds);
  k.text = "faults.mtbf draw " + std::to_string(++draws_) + " '" + k.who + "@" + at + "'";
  return k;
}

void fault_injector::schedule(const fault_event& k) {
  if (!targets_.engine) {
    pending_.push_back(k);
    return;
  }
  timed_.push_back(k);
  targets_.engine->at(start_ + to_duration(*k.seconds), [this, k] {
    if (!armed_)
      return;
    timed_.erase(std::find_if(timed_.begin(), timed_.end(),
                              [&](const auto& x) { return x.text == k.text; }));
    if (held_ && k.what == fault_event::action::kill)
      deferred_.push_back(k);
    else
      inject(k);
  });
}

double fault_injector::seconds_now() const {
  return std::chrono::duration<double>(self_->clock().now() - start_).count();
}

void fault_injector::poll(std::uint64_t examples) {
  const double now = seconds_now();
  for (auto i = thaws_.begin(); i != thaws_.end();)
    if (now >= i->at) {
      targets_.transport->thaw(i->host);
      char line[96];
      std::snprintf(line, sizeof line, "thawed host %zu at %.3f s", i->host, now);
      done_.push_back(line);
      i = thaws_.erase(i);
    } else {
      ++i;
    }
  std::vector<fault_event> due; // taken out first: inject() may add the next draw
  for (auto i = pending_.begin(); i != pending_.end();) {
    if ((i->seconds && now >= *i->seconds) ||
        (i->fraction && double(examples) >= *i->fraction * double(total_))) {
      due.push_back(std::move(*i));
      i = pending_.erase(i);
    } else {
      ++i;
    }
  }
  for (const auto& k : due)
    inject(k);
}

void fault_injector::release() {
  held_ = false;
  auto due = std::move(deferred_);
  deferred_.clear();
  for (const auto& k : due)
    inject(k);
}

void fault_injector::disarm() {
  armed_ = false;
  for (const auto* v : {&pending_, &timed_, &deferred_})
    for (const auto& k : *v)
      spdlog::warn("{} not carried out: training ended before it", k.text);
  pending_.clear();
  timed_.clear();
  deferred_.clear();
  for (const auto& t : thaws_) // nothing may stay held past training
    targets_.transport->thaw(t.host);
  thaws_.clear();
}

std::size_t fault_injector::host_of(const fault_event& k) const {
  switch (k.kind) {
    case fault_event::role::trainer:
      return place_.host_of_trainer(k.index);
    case fault_event::role::embedding_shard:
      return place_.host_of_embedding(k.index);
    default:
      return place_.host_of_dense(k.index);
  }
}

void fault_injector::inject(const fault_event& k) {
  const double at = seconds_now();
  const auto now = self_->clock().now();
  const auto host = host_of(k);
  char line[256];
  std::snprintf(line, sizeof line, "%s %s (host %zu) at %.3f s", verb(k.what),
                k.who.c_str(), host, at);
  std::string what = line;
  if (k.what != fault_event::action::kill) {
    std::snprintf(line, sizeof line, " for %.3f s", k.duration);
    what += line;
  }
  if (k.what == fault_event::action::slow_nic) {
    std::snprintf(line, sizeof line, " to %g x its bandwidth", k.factor);
    what += line;
  }
  spdlog::warn("{}: {}", k.text, what);
  done_.push_back(what);
  if (k.text.rfind("faults.mtbf", 0) == 0 && armed_) // the next draw
    schedule(draw_failure(*k.seconds));
  switch (k.what) {
    case fault_event::action::kill: {
      caf::actor target;
      switch (k.kind) {
        case fault_event::role::trainer:
          target = caf::actor_cast<caf::actor>(c_.trainers[k.index]);
          break;
        case fault_event::role::embedding_shard:
          target = caf::actor_cast<caf::actor>(c_.shards[k.index]);
          break;
        case fault_event::role::dense_shard:
          target = caf::actor_cast<caf::actor>(c_.dense[k.index]);
          break;
      }
      caf::anon_send_exit(target, caf::exit_reason::kill);
      killed_.push_back(target.address());
      break;
    }
    case fault_event::action::freeze:
      if (targets_.engine) {
        targets_.engine->freeze(host, now + to_duration(k.duration));
      } else if (targets_.transport) {
        targets_.transport->freeze(host);
        thaws_.push_back({host, at + k.duration});
      }
      break;
    case fault_event::action::slow_nic:
      if (targets_.network)
        targets_.network->slow(host, now, now + to_duration(k.duration), k.factor);
      break;
  }
}

} // namespace runtime
