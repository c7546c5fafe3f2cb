// One batch of a hogwild worker (see hogwild_worker.hpp): the computation on
// the trainer's replica and the updates it sends.
#include "actors/hogwild_worker.hpp"
#include "actors/hogwild_worker_detail.hpp"
#include "actors/sim_host.hpp"
#include "actors/work.hpp"

#include <thread>

#include <caf/typed_event_based_actor.hpp>

#include "model/dct_mp.hpp"
#include "model/dct_mp_dynamic.hpp"
#include "model/metrics.hpp"

namespace actors::worker_detail {

// The lock-free Hogwild step on the replica, its thread CPU time counted
// apart: the part of a batch that other workers' writes to the same
// parameters slow the most (docs/RESULTS.md, section 2b).
void dense_step(worker_state& st) {
  const double t0 = thread_cpu_seconds();
  const auto& rep = *st.cfg.replica;
  st.cfg.replica->apply_dense(
    st.cfg.dense_opt.at(st.cfg.examples_before + rep.examples.load(std::memory_order_relaxed)),
    st.grads.data());
  st.stats.dense_step_cpu_seconds += thread_cpu_seconds() - t0;
}

// Virtual clock: lands the last batch's dense step (its end event has come,
// or this worker is about to read the replica again).
void apply_pending(self_ptr self) {
  auto& st = self->state;
  if (!st.apply_pending)
    return;
  st.apply_pending = false;
  dense_step(st);
}

namespace {

void count_push(worker_state& st, std::size_t s, std::uint64_t bytes) {
  st.stats.push_bytes += bytes;
  if (st.cfg.progress)
    live_progress::count(st.cfg.progress->shard_push_bytes, s, bytes);
}

// dct.mp: st.mp_vec = what goes of shard s's gradients (st.mp_grads, in the
// order of `keys`): the entries the shard sent (mask), or the entries above
// their table's gradient threshold after adding the rows' residuals
// (straight).
void threshold_push(worker_state& st, const worker_batch& slot, std::size_t s,
                    const std::vector<std::uint64_t>& keys) {
  const std::size_t words = st.cfg.dynamic ? 2 : 1, n = keys.size() / words;
  if (!st.mp_grad_tau) { // an id without a row read zeros: no entry of it goes
    slot.shard_rows(s, st.mp_rows);
    model::mask_gradients(st.mp_rows.data(), st.mp_grads.data(), st.mp_grads.size(), st.mp_vec);
    return;
  }
  const std::size_t dim = st.cfg.arch.dim;
  const bool ef = st.cfg.dct.error_feedback;
  if (st.cfg.dynamic) { // model/dct_mp_dynamic.hpp: marked rows lose their residual
    slot.shard_marks(s, st.mp_row_marks);
    model::forget_marked(ef ? &*st.mp_residual : nullptr, keys.data(), st.mp_row_marks.data(), n,
                         st.mp_grads.data(), dim);
  }
  model::threshold_row_push(*st.mp_grad_tau, ef ? &*st.mp_residual : nullptr, keys.data(),
                            st.mp_grads.data(), n, dim, st.cfg.dct.rounds_half(), st.mp_vec, words);
  if (ef && st.cfg.dynamic)
    for (std::size_t i = 0; i < n; ++i)
      if (st.mp_row_marks[i] == model::mark_absent) // nothing owed to no row
        st.mp_residual->drop(keys.data() + 2 * i);
}

// dct.mp-push-places: the push of `slot` to shard s may name its rows by
// their place in the slot's lookup: the handle that answered it is still the
// shard's (no restart since; the shard keeps its own lookups only).
bool places_rows(const worker_state& st, const worker_batch& slot, std::size_t s) {
  if (!st.cfg.dct.mp_push_places)
    return false;
  const auto& at = st.rows_gen[slot.seq() % 2];
  const std::uint64_t now = s < st.lookup_gen.size() ? st.lookup_gen[s] : 0;
  return s < at.size() && at[s] == now;
}

// The batch's ONE push to shard s: its rows' summed gradients; with dct.mp
// thresholded (model/dct_mp.hpp) and encoded.
void push(self_ptr self, const worker_batch& slot, std::size_t s) {
  auto& st = self->state;
  if (!st.cfg.local_rows.empty()) { // straight to the shard's tables
    slot.apply_grads(s, st.grad_unique.data(), *st.cfg.local_rows[s]);
    return;
  }
  if (!st.cfg.dct.mp) {
    messages::embedding_grads g;
    slot.shard_keys(s, g.keys.values);
    slot.shard_grads(s, st.grad_unique.data(), g.grads.values);
    count_push(st, s, g.keys.bytes() + g.grads.bytes());
    self->send(st.cfg.shards[s], messages::push_atom::value, std::move(g));
    return;
  }
  messages::sparse_grads g;
  slot.shard_keys(s, g.keys.values);
  slot.shard_grads(s, st.grad_unique.data(), st.mp_grads);
  threshold_push(st, slot, s, g.keys.values);
  if (places_rows(st, slot, s)) { // the shard holds the lookup's keys
    g.batch = slot.seq();
    g.rows = st.cfg.dct.mp_drop_rows ? messages::rows_placed : messages::rows_placed_all;
    g.keys.values.clear();
  } else if (st.cfg.dct.mp_drop_rows) { // name only the rows the push changes
    model::drop_empty_rows(g.keys.values, st.mp_vec, st.cfg.arch.dim, st.cfg.dynamic ? 2 : 1);
  }
  g.payload.values = model::encode(st.mp_vec);
  st.stats.mp_grads_sent += st.mp_vec.nnz();
  st.stats.mp_grads_of += st.mp_grads.size();
  count(work::sparse_encode, double(st.mp_grads.size()), 0.0,
        st.mp_residual ? double(st.mp_residual->rows()) : 0.0); // the map's size prices it
  // A placed push's batch number (8 bytes) and form (1) stand for its keys.
  count_push(st, s, g.keys.bytes() + g.payload.bytes() + (g.rows == messages::rows_keyed ? 0 : 9));
  self->send(st.cfg.shards[s], messages::push_atom::value, std::move(g));
}

} // namespace

void train(self_ptr self, const worker_batch& slot) {
  auto& st = self->state;
  apply_pending(self); // its own last step first
  cpu_meter meter(st.stats.cpu_seconds);
  const auto thread = std::this_thread::get_id();
  if (st.stats.batches > 0 && thread != st.last_thread)
    ++st.stats.thread_moves;
  st.last_thread = thread;
  const auto& cfg = st.cfg;
  const auto& b = slot.examples();
  const std::size_t n = b.size();
  auto& rep = *cfg.replica;
  st.grad_unique.resize(slot.num_unique() * cfg.arch.dim);
  st.net->forward_backward(rep.params(), b.dense.data(), slot.input(), b.labels.data(), n, st.ws,
                           st.grads.data(), st.grad_unique.data());
  double prob_sum = 0;
  std::uint64_t positives = 0;
  for (std::size_t e = 0; e < n; ++e) {
    prob_sum += model::sigmoid(st.ws.logits[Eigen::Index(e)]);
    positives += b.labels.values[e] > 0.5f ? 1 : 0;
  }
  st.apply_pending = true; // the lock-free Hogwild step, due at this handler's end
  at_handler_end(self, [self] { apply_pending(self); });
  count(work::train_examples, double(n), st.net->flops_per_example(), double(rep.size()));
  for (std::size_t s = 0; s < slot.num_shards(); ++s)
    if (slot.shard_size(s) > 0)
      push(self, slot, s);
  st.stats.examples += n;
  st.stats.batches += 1;
  st.stats.loss_sum += st.ws.loss_sum;
  st.stats.prob_sum += prob_sum;
  st.stats.positives += positives;
  if (cfg.progress)
    cfg.progress->add(st.ws.loss_sum, prob_sum, positives);
  const auto batches_now = rep.batches.fetch_add(1, std::memory_order_seq_cst) + 1;
  rep.examples.fetch_add(n, std::memory_order_relaxed);
  if (cfg.syncer && rep.claim_wake(batches_now)) // the batch its shadow pacing waits for
    self->send(cfg.syncer, messages::wake_atom::value);
  st.idle_since = self->clock().now();
}

} // namespace actors::worker_detail
