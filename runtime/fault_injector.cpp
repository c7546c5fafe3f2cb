#include "runtime/fault_injector.hpp"

#include <algorithm>
#include <fstream>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "runtime/input.hpp"

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

} // namespace

std::optional<std::string> check_fault_kills(const std::vector<fault_kill>& kills,
                                             const train_config& cfg) {
  for (const auto& k : kills) {
    std::size_t have = 0;
    const char* key = "";
    switch (k.kind) {
      case fault_kill::role::trainer:
        have = cfg.cluster.trainers, key = "cluster.trainers";
        break;
      case fault_kill::role::embedding_shard:
        have = cfg.cluster.embedding_shards, key = "cluster.embedding-shards";
        break;
      case fault_kill::role::dense_shard:
        have = model::is_easgd(cfg.sync.algorithm) ? cfg.cluster.dense_shards : 0;
        key = model::is_easgd(cfg.sync.algorithm) ? "cluster.dense-shards"
                                                  : "dense shards (EASGD only)";
        break;
    }
    if (k.index >= have)
      return "option 'faults.kill': entry '" + k.text + "' names a role the cluster does not "
             "have (" + key + " = " + std::to_string(have) + ")";
  }
  return std::nullopt;
}

fault_injector::fault_injector(const train_config& cfg, const cluster_handles& c,
                               caf::blocking_actor* self, virtual_engine* engine)
    : kills_(cfg.sim.kills), c_(c), self_(self), start_(self->clock().now()) {
  if (std::any_of(kills_.begin(), kills_.end(), [](const auto& k) { return k.fraction; }))
    total_ = training_examples(cfg);
  if (!engine)
    return;
  // Virtual clock: a timed kill is an event of its own.
  for (auto i = kills_.begin(); i != kills_.end();)
    if (i->seconds) {
      const auto k = *i;
      timed_.push_back(k);
      engine->at(start_ + std::chrono::duration_cast<caf::actor_clock::duration_type>(
                            std::chrono::duration<double>(*k.seconds)),
                 [this, k] {
                   if (!armed_)
                     return;
                   timed_.erase(std::find_if(timed_.begin(), timed_.end(),
                                             [&](const auto& x) { return x.text == k.text; }));
                   kill(k);
                 });
      i = kills_.erase(i);
    } else {
      ++i;
    }
}

void fault_injector::poll(std::uint64_t examples) {
  const double now = std::chrono::duration<double>(self_->clock().now() - start_).count();
  for (auto i = kills_.begin(); i != kills_.end();) {
    const bool due = (i->seconds && now >= *i->seconds) ||
                     (i->fraction && double(examples) >= *i->fraction * double(total_));
    if (due) {
      kill(*i);
      i = kills_.erase(i);
    } else {
      ++i;
    }
  }
}

void fault_injector::disarm() {
  armed_ = false;
  for (const auto* v : {&kills_, &timed_})
    for (const auto& k : *v)
      spdlog::warn("faults.kill: {} not carried out: training ended before it", k.text);
  kills_.clear();
  timed_.clear();
}

void fault_injector::kill(const fault_kill& k) {
  caf::actor target;
  switch (k.kind) {
    case fault_kill::role::trainer:
      target = caf::actor_cast<caf::actor>(c_.trainers[k.index]);
      break;
    case fault_kill::role::embedding_shard:
      target = caf::actor_cast<caf::actor>(c_.shards[k.index]);
      break;
    case fault_kill::role::dense_shard:
      target = caf::actor_cast<caf::actor>(c_.dense[k.index]);
      break;
  }
  const double at = std::chrono::duration<double>(self_->clock().now() - start_).count();
  spdlog::warn("faults.kill: killing {} at {:.3f} s", k.text, at);
  caf::anon_send_exit(target, caf::exit_reason::kill);
}

} // namespace runtime
