// How the shadow syncer ends (see the stop protocol and failures in
// shadow_syncer.hpp):
//   trainer/coordinator -> syncer: stop(last_round); syncer -> it: sync_stats
//   a dense shard or ring peer DOWN -> fail, or wait for the re-form
#include "actors/shadow_syncer.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "messages/errors.hpp"

namespace actors {

using messages::errc;
using messages::make_error;

void syncer_state::on_stop(std::uint64_t last_round) {
  stop_after = std::max(stop_after.value_or(0), last_round);
  if (in_round() && ring_method() && ring_rounds() >= *stop_after) {
    round = round_phase::idle; // abandoned: no one needs this round any more
    for (auto& p : waiting_current)
      waiting_next.push_back(std::move(p));
    waiting_current.clear();
  }
  advance();
}

void syncer_state::finish_stop() {
  phase = syncer_phase::stopped;
  if (model::is_bmuf(cfg.algorithm)) { // the block state, for checkpoints
    stats.bmuf_global.values = bmuf.global;
    stats.bmuf_momentum.values = bmuf.momentum;
  }
  for (const auto& s : easgd.senders) { // DCT: what each range's sender counted
    stats.dct_sent += s.counts().values;
    stats.dct_sent_of += s.counts().entries;
    stats.dct_refreshes += s.counts().refreshes;
  }
  if (!easgd.senders.empty()) // dense EASGD: the whole ranges both ways
    stats.dct_dense_bytes = 4 * (stats.dct_sent_of + stats.dct_replied_of);
  if (dct_ring()) {
    stats.dct_sent = dring.counts.values;
    stats.dct_sent_of = dring.counts.entries;
    stats.dct_refreshes = dring.counts.refreshes;
    stats.dct_replied = dring.received; // the others' changes, as they arrived
    stats.dct_replied_of = dring.counts.entries * (peers.empty() ? 0 : peers.size() - 1);
    stats.dct_dense_bytes = dring.dense_bytes;
  }
  for (auto& p : waiting_next)
    p.deliver(stats.rounds);
  waiting_next.clear();
  for (auto& p : stop_promises)
    p.deliver(stats);
  stop_promises.clear();
  spdlog::debug("{}: stopped after {} rounds", who(), stats.rounds);
}

void syncer_state::on_down(const caf::down_msg& dm) {
  if (stopped())
    return; // shutdown order no longer matters
  const auto reason = self->system().render(dm.reason);
  // user_shutdown: the runtime stops the cluster (a dense shard), or a
  // peer's trainer ended (its children go with it). The syncer ends too,
  // without an error line: whatever ended the trainer says so itself.
  const bool shutdown = dm.reason == caf::exit_reason::user_shutdown;
  auto end_with = [&](errc code, const std::string& what) {
    auto err = make_error(code, who() + ": " + what);
    if (!shutdown)
      return fail(std::move(err));
    spdlog::debug("{}: {}", who(), self->system().render(err));
    end(std::move(err));
  };
  for (std::size_t i = 0; i < cfg.dense_shards.size(); ++i)
    if (dm.source == cfg.dense_shards[i].address())
      return end_with(errc::shard_down, "dense shard " + std::to_string(i) + " down: " + reason);
  if (!stop_after) {
    if (cfg.reform_on_loss) { // the runtime re-forms the ring without it
      spdlog::warn("{}: ring peer down ({}); waiting for the ring to be re-formed", who(), reason);
      return;
    }
    return end_with(errc::trainer_down, "ring peer down before the stop: " + reason);
  }
  if (prev && dm.source == prev.address()) {
    prev_down = true; // everything it sent is in our mailbox already (FIFO)
    check_ring();
  } // another member: its loss reaches us through our predecessor, if it matters
}

void syncer_state::fail(errc code, const std::string& what) {
  fail(make_error(code, who() + ": " + what));
}

void syncer_state::fail(caf::error err) {
  spdlog::error("{}: {}", who(), self->system().render(err));
  end(std::move(err));
}

void syncer_state::end(caf::error err) {
  phase = syncer_phase::stopped; // nothing more happens here, even later in this handler
  for (auto* v : {&waiting_next, &waiting_current})
    for (auto& p : *v)
      p.deliver(err);
  for (auto& p : stop_promises)
    p.deliver(err);
  for (auto& p : hold_promises)
    p.deliver(err);
  hold_promises.clear();
  waiting_next.clear();
  waiting_current.clear();
  stop_promises.clear();
  self->quit(std::move(err));
}

} // namespace actors
