// The ring half of the shadow syncer (MA / BMUF): joining and re-forming the
// ring, starting a ring round, feeding it chunks, completing it with the
// average (MA) or the BMUF block step. See shadow_syncer.hpp.
#include "actors/shadow_syncer_ring.hpp"
#include "actors/peer.hpp"
#include "actors/work.hpp"

#include <spdlog/spdlog.h>

#include "messages/errors.hpp"

namespace actors {

using messages::errc;
using messages::make_error;
caf::error syncer_state::set_peers(std::uint32_t rank,
                                   const std::vector<caf::strong_actor_ptr>& all) {
  const auto n = static_cast<std::uint32_t>(all.size());
  if (!ring_method())
    return {}; // EASGD and none have no ring
  if ((ring && ring->round() > 0) || (dring.gather && dring.gather->round() > 0))
    return make_error(errc::protocol_mismatch, who() + ": peers after the first round");
  const auto me = caf::actor_cast<caf::strong_actor_ptr>(self);
  if (n == 0 || rank >= n || n != cfg.num_trainers || all[rank] != me)
    return make_error(errc::protocol_mismatch,
                      who() + ": bad ring (rank " + std::to_string(rank) + " of " +
                        std::to_string(n) + ", " + std::to_string(cfg.num_trainers) +
                        " trainers, or not this syncer at its rank)");
  return join_ring(rank, all);
}

caf::error syncer_state::reform(std::uint32_t gen, std::uint32_t rank,
                                const std::vector<caf::strong_actor_ptr>& survivors) {
  if (!ring_method() || stopped())
    return {};
  // A generation or ring no loss of this job's trainers can make: refused.
  if (auto bad = messages::check_reform(gen, rank, survivors.size(), cfg.num_trainers);
      !bad.empty()) {
    refuse("ring re-form: " + bad);
    return {};
  }
  const auto me = caf::actor_cast<caf::strong_actor_ptr>(self);
  if (gen <= generation || survivors.empty() || rank >= survivors.size() ||
      survivors[rank] != me)
    return make_error(errc::protocol_mismatch,
                      who() + ": bad ring re-form (generation " + std::to_string(gen) +
                        " after " + std::to_string(generation) + ", rank " +
                        std::to_string(rank) + " of " + std::to_string(survivors.size()) + ")");
  if (in_round()) { // abandoned unmerged; its FR requests move to the next round
    round = round_phase::idle;
    for (auto& p : waiting_current)
      waiting_next.push_back(std::move(p));
    waiting_current.clear();
  }
  spdlog::warn("{}: ring re-formed with {} member(s), generation {}", who(), survivors.size(),
               gen);
  generation = gen;
  generation_base = stats.rounds;
  prev_down = false;
  return join_ring(rank, survivors);
}

caf::error syncer_state::join_ring(std::uint32_t rank,
                                   const std::vector<caf::strong_actor_ptr>& all) {
  const auto n = static_cast<std::uint32_t>(all.size());
  const auto me = caf::actor_cast<caf::strong_actor_ptr>(self);
  peers.clear();
  for (const auto& p : all) {
    peers.push_back(caf::actor_cast<syncer_actor>(p));
    if (p != me)
      self->monitor(peers.back());
  }
  next = peers[(rank + 1) % n];
  prev = peers[(rank + n - 1) % n];
  if (dct_ring())
    return join_dct_ring(rank, n);
  ring = std::make_unique<ring_allreduce>(
    rank, n,
    [this](messages::ring_chunk&& c) {
      stats.bytes_sent += c.values.bytes();
      if (cfg.sent_bytes)
        cfg.sent_bytes->fetch_add(c.values.bytes(), std::memory_order_relaxed);
      self->send(next, messages::ring_atom::value, std::move(c));
    },
    generation);
  return replay_early(*ring, early_chunks);
}

void syncer_state::refuse(const std::string& what) const {
  spdlog::warn("{}: {} (refused; sent by {})", who(), what, peer_name(self->current_sender()));
}

void syncer_state::start_ring() {
  if (dct_ring())
    return start_dct_ring();
  if (!ring) {
    fail(errc::protocol_mismatch, "a ring round before peers_atom");
    return;
  }
  cfg.replica->copy_out(0, snapshot.size(), snapshot.data());
  reduced = snapshot;
  if (auto err = ring->begin(ring_rounds() + 1, reduced.data(), reduced.size()); !err.empty()) {
    fail(errc::protocol_mismatch, err);
    return;
  }
  check_ring();
}

void syncer_state::on_ring(messages::ring_chunk&& chunk) {
  count(work::ring_reduce, double(chunk.values.size()));
  if (stopped())
    return;
  if (!ring_method()) {
    fail(errc::protocol_mismatch, "ring chunk for a non-ring method");
    return;
  }
  // Bounded like ring_allreduce's stash (ring_allreduce::max_early_chunks).
  deliver_ring(ring.get(), early_chunks, max_early_chunks(), std::move(chunk), "ring chunks");
}

// After every step of the ring: complete the round, or fail when it can never
// complete (the previous member is gone and everything it sent is applied).
void syncer_state::check_ring() {
  if (dct_ring())
    return check_dct_ring();
  if (!in_round() || ring->round() != ring_rounds() + 1)
    return;
  if (!ring->done()) {
    if (prev_down)
      fail(errc::trainer_down,
           "previous ring member down during round " + std::to_string(ring->round()));
    return;
  }
  const float n = static_cast<float>(peers.empty() ? 1 : peers.size());
  for (auto& x : reduced)
    x /= n; // avg = sum / N
  const float* target = reduced.data(); // MA: the average
  if (model::is_bmuf(cfg.algorithm)) {  // BMUF: the new block start
    model::bmuf_step(cfg.bmuf, bmuf.global.data(), bmuf.momentum.data(), bmuf.block_start.data(),
                     reduced.data(), reduced.size());
    target = bmuf.block_start.data();
  }
  cfg.replica->merge(cfg.merge, snapshot.data(), target);
  finish_round();
}

} // namespace actors
