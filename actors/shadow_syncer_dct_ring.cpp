// DCT for the ring methods (dct.dp with MA or BMUF; docs/dct.md): the
// sparse all-gather of thresholded changes (sparse_allgather.hpp) in place
// of the dense ring all-reduce. See shadow_syncer.hpp.
//
// Every member holds the same common picture c of the replicas (the origin
// at spawn, then what the rounds agreed). A round at member i:
//   s_i = threshold(w_i - c, tau_i)       (w_i: the snapshot)
//   all-gather s_1 .. s_N round the ring
//   c' = c + (1/N) sum_j s_j              (in rank order: the same bits everywhere)
//   MA:   the new common point is c'
//   BMUF: the block step with c' as the average; the new point is the block start
//   w_i <- new point + (w_i - c - s_i)    (error feedback: what i did not send
//                                          stays in its replica and goes later;
//                                          without it, w_i <- new point)
// merged into the live replica like the dense ring's target. After a ring
// re-form the picture restarts at zero and the first round sends every entry.
// A member whose trainer has finished (free-running) sends empty changes.
#include "actors/shadow_syncer.hpp"
#include "actors/shadow_syncer_ring.hpp"
#include "actors/work.hpp"

#include <algorithm>

#include "messages/errors.hpp"

namespace actors {

using messages::errc;

caf::error syncer_state::init_dct_ring() {
  const auto n = cfg.replica->size();
  if (n > 0xFFFFFFFFu)
    return messages::make_error(errc::bad_request, who() + ": dct.dp needs at most 2^32 - 1 "
                                                           "dense parameters");
  if (cfg.dct_origin.empty())
    dring.base = cfg.replica->snapshot(); // every trainer starts from the same parameters
  else if (cfg.dct_origin.size() == n)
    dring.base = cfg.dct_origin;
  else
    return messages::make_error(errc::bad_request, who() + ": the DCT origin has the wrong size");
  dring.tau.emplace(cfg.dct.dp_keep, cfg.dct.refresh, (std::uint64_t{cfg.trainer} << 32) | 0xD,
                    cfg.dct.per_layer ? model::dct_segments(cfg.dct.layer_starts, 0, n)
                                      : std::vector<std::size_t>{0, n});
  if (cfg.num_trainers <= 1)
    return join_dct_ring(0, 1);
  return {};
}

caf::error syncer_state::join_dct_ring(std::uint32_t rank, std::uint32_t n) {
  if (generation > 0) {
    // A re-formed ring: the survivors may disagree on the common picture
    // (a round that some completed with the lost member's change and others
    // abandoned). Restart it at zero everywhere, and send every entry in the
    // first round, so that round leaves the exact average.
    std::fill(dring.base.begin(), dring.base.end(), 0.0f);
    dring.resync = true;
  }
  auto send = [this](messages::ring_sparse&& p) {
    stats.bytes_sent += p.payload.bytes();
    if (cfg.sent_bytes)
      cfg.sent_bytes->fetch_add(p.payload.bytes(), std::memory_order_relaxed);
    self->send(next, messages::ring_atom::value, std::move(p));
  };
  const auto size = std::uint32_t(snapshot.size());
  if (cfg.dct.dp_ring_reduce) {
    dring.chunk_tau.emplace(cfg.dct, size, n, (std::uint64_t{cfg.trainer} << 32) | 0xE);
    dring.acc.assign(size, 0.0f);
    if (dring.carry.size() != size)
      dring.carry.assign(size, 0.0f);
    dring.reduce = std::make_unique<sparse_ring_reduce>(
      rank, n, size, std::move(send),
      [this](std::uint32_t chunk, float* x, std::size_t, model::sparse_vector& out) {
        dring.chunk_tau->take(chunk, x, out, dring.counts, dring.take_all, !dring.kept_own);
      },
      generation);
  } else {
    dring.gather = std::make_unique<sparse_allgather>(rank, n, size, std::move(send), generation);
  }
  // What the dense ring would send per round: every chunk but (rank + 1)
  // in the reduce-scatter and every chunk but (rank + 2) in the all-gather.
  dring.dense_bytes_per_round = 0;
  if (n > 1) {
    const auto chunks = model::split_range(snapshot.size(), n);
    dring.dense_bytes_per_round =
      4 * (2 * snapshot.size() - chunks[(rank + 1) % n].size - chunks[(rank + 2) % n].size);
  }
  if (dring.reduce)
    return replay_early(*dring.reduce, dring.early_pieces);
  return replay_early(*dring.gather, dring.early_pieces);
}

void syncer_state::start_dct_ring() {
  if (!dring.gather && !dring.reduce) {
    fail(errc::protocol_mismatch, "a ring round before peers_atom");
    return;
  }
  const std::size_t n = snapshot.size();
  cfg.replica->copy_out(0, n, snapshot.data());
  for (std::size_t i = 0; i < n; ++i)
    reduced[i] = snapshot[i] - dring.base[i]; // the change since the common picture
  if (dring.reduce) {
    start_dct_reduce();
    return;
  }
  if (free_running() && !dring.resync) {
    // This trainer has finished: it keeps the ring going for the others but
    // sends no change, so rounds after the end leave every replica as it is
    // (a dense MA round of equal replicas does the same). Otherwise how many
    // such rounds run before the stop, which is timing, would decide the
    // final replicas.
    dring.own.size = std::uint32_t(n);
    dring.own.index.clear();
    dring.own.value.clear();
  } else {
    dring.tau->apply(reduced.data(), dring.own, dring.counts, dring.resync);
    dring.resync = false;
    cfg.dct.round_dp(dring.own); // the rounding's error stays in reduced (below)
  }
  dring.counts.values += dring.own.nnz();
  dring.counts.entries += n;
  count(work::dense_delta, double(n)); // as the EASGD syncer's DCT round
  if (auto err = dring.gather->begin(ring_rounds() + 1, dring.own); !err.empty()) {
    fail(errc::protocol_mismatch, err);
    return;
  }
  check_dct_ring();
}

void syncer_state::on_ring_sparse(messages::ring_sparse&& piece) {
  count(work::sparse_relay, double(piece.payload.size()));
  if (stopped())
    return;
  if (!dct_ring()) {
    fail(errc::protocol_mismatch, "a sparse ring vector, but dct.dp is off here or the method "
                                  "has no ring");
    return;
  }
  if (cfg.dct.dp_ring_reduce)
    deliver_ring(dring.reduce.get(), dring.early_pieces,
                 sparse_ring_reduce::max_early(cfg.num_trainers), std::move(piece),
                 "sparse ring payloads");
  else
    deliver_ring(dring.gather.get(), dring.early_pieces,
                 sparse_allgather::max_early(cfg.num_trainers), std::move(piece),
                 "sparse ring vectors");
}

void syncer_state::check_dct_ring() {
  if (dring.reduce) {
    check_dct_reduce();
    return;
  }
  if (!in_round() || dring.gather->round() != ring_rounds() + 1)
    return;
  if (!dring.gather->done()) {
    if (prev_down)
      fail(errc::trainer_down,
           "previous ring member down during round " + std::to_string(dring.gather->round()));
    return;
  }
  const std::size_t n = snapshot.size();
  const float members = static_cast<float>(peers.empty() ? 1 : peers.size());
  dring.received += dring.gather->received_values();
  dring.dense_bytes += dring.dense_bytes_per_round;
  count(work::ring_sum, double(n));
  // What this member did not send: its change less what went (0 for a sent
  // f32 entry, a half's rounding error).
  for (std::size_t k = 0; k < dring.own.nnz(); ++k)
    reduced[dring.own.index[k]] -= dring.own.value[k];
  dring.gather->add_sum(dring.base.data(), 1.0f / members); // c' = c + mean of the changes sent
  if (model::is_bmuf(cfg.algorithm)) {
    model::bmuf_step(cfg.bmuf, bmuf.global.data(), bmuf.momentum.data(), bmuf.block_start.data(),
                     dring.base.data(), n);
    std::copy(bmuf.block_start.begin(), bmuf.block_start.end(), dring.base.begin());
  }
  if (cfg.dct.error_feedback)
    for (std::size_t i = 0; i < n; ++i)
      reduced[i] += dring.base[i];
  else
    std::copy(dring.base.begin(), dring.base.end(), reduced.begin());
  cfg.replica->merge(cfg.merge, snapshot.data(), reduced.data());
  finish_round();
}

} // namespace actors

namespace actors {

// dct.dp-ring=reduce: the accumulator is the change since the common
// picture plus what this member kept from earlier rounds (the carry, error
// feedback's residual). A finished trainer drops its carry and relays: its
// accumulator starts at zero, and it passes on every entry it receives, as
// f32 values, so it sends nothing of its own (as the gather's empty change),
// keeps nothing of the others' (a member that kept them and never sent again
// would hold back their progress), and ends every round with a zero
// accumulator (x - x is 0). Once every trainer has finished, the rounds
// change no replica. After a re-form the carry, of a ring that no longer
// agrees, is dropped with the picture, and the first round takes every
// entry.
void syncer_state::start_dct_reduce() {
  const std::size_t n = snapshot.size();
  dring.kept_own = free_running() && !dring.resync;
  if (dring.resync || dring.kept_own)
    std::fill(dring.carry.begin(), dring.carry.end(), 0.0f);
  if (dring.kept_own)
    std::fill(dring.acc.begin(), dring.acc.end(), 0.0f);
  else
    for (std::size_t i = 0; i < n; ++i)
      dring.acc[i] = reduced[i] + dring.carry[i];
  dring.take_all = dring.resync || dring.kept_own;
  dring.resync = false;
  dring.counts.entries += n;
  count(work::dense_delta, double(n));
  if (auto err = dring.reduce->begin(ring_rounds() + 1, dring.acc.data()); !err.empty()) {
    fail(errc::protocol_mismatch, err);
    return;
  }
  check_dct_reduce();
}

void syncer_state::check_dct_reduce() {
  if (!in_round() || dring.reduce->round() != ring_rounds() + 1)
    return;
  if (!dring.reduce->done()) {
    if (prev_down)
      fail(errc::trainer_down,
           "previous ring member down during round " + std::to_string(dring.reduce->round()));
    return;
  }
  const std::size_t n = snapshot.size();
  const float members = static_cast<float>(peers.empty() ? 1 : peers.size());
  const bool finished = dring.kept_own;
  dring.received += dring.reduce->received_values();
  dring.counts.values += dring.reduce->taken_values();
  dring.dense_bytes += dring.dense_bytes_per_round;
  count(work::ring_sum, double(n));
  dring.reduce->add_sum(dring.base.data(), 1.0f / members); // c' = c + mean of the agreed sums
  if (model::is_bmuf(cfg.algorithm)) {
    model::bmuf_step(cfg.bmuf, bmuf.global.data(), bmuf.momentum.data(), bmuf.block_start.data(),
                     dring.base.data(), n);
    std::copy(bmuf.block_start.begin(), bmuf.block_start.end(), dring.base.begin());
  }
  // The new replica is the new common point (a finished trainer's plus its
  // own change, which it did not send). What this member kept, its own
  // entries and the others' partial sums it did not pass on, waits beside
  // the replica for the next round (error feedback; dropped without):
  // kept in the replica, a member's chunk would carry up to N trainers'
  // changes at full weight (measured worse at 8 and 16 trainers, docs/dct.md).
  for (std::size_t i = 0; i < n; ++i)
    reduced[i] = dring.base[i] + (finished ? reduced[i] : 0.0f);
  if (cfg.dct.error_feedback)
    std::swap(dring.carry, dring.acc);
  cfg.replica->merge(cfg.merge, snapshot.data(), reduced.data());
  finish_round();
}

} // namespace actors
