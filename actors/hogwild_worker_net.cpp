// The network model's side of hogwild_worker (cfg.net set; see
// hogwild_worker.hpp): when lookup replies count as arrived, holding early
// ones, and delayed pushes.
//   worker -> worker: tick(seq, shard) when held rows arrive
#include <caf/typed_event_based_actor.hpp>

#include "actors/hogwild_worker_detail.hpp"

namespace actors::worker_detail {

constexpr std::uint64_t header_bytes = 16; // batch id and lengths of a message

// When the rows of a lookup of n_keys keys to shard s, sent now, count as arrived.
clock_type::time_point lookup_due(self_ptr self, std::size_t s, std::size_t n_keys) {
  const auto& cfg = self->state.cfg;
  const auto me = cfg.place.host_of_trainer(cfg.trainer);
  const auto there = cfg.place.host_of_embedding(s);
  const auto sent = self->clock().now();
  const auto d_req = cfg.net->transfer(me, there, header_bytes + 8 * n_keys, sent);
  const auto d_rep =
    cfg.net->transfer(there, me, header_bytes + 4 * cfg.arch.dim * n_keys, sent + d_req);
  return sent + d_req + d_rep;
}

// A lookup reply: use it now, or hold it until its simulated arrival.
void on_reply(self_ptr self, std::uint64_t seq, std::size_t s, messages::embedding_rows& r) {
  auto& st = self->state;
  if (st.cfg.net && !st.finished) {
    const auto now = self->clock().now();
    const auto due = st.rows_due[seq % 2][s];
    if (due > now) {
      st.held.push_back({seq, s, std::move(r)});
      self->delayed_send(self, due - now, messages::tick_atom::value, seq, std::uint64_t{s});
      return;
    }
  }
  on_rows(self, seq, s, r);
}

// The simulated arrival of held rows.
void on_tick(self_ptr self, std::uint64_t seq, std::uint64_t s) {
  auto& held = self->state.held;
  for (auto i = held.begin(); i != held.end(); ++i)
    if (i->seq == seq && i->shard == s) {
      auto rows = std::move(i->rows);
      held.erase(i);
      if (!self->state.finished)
        on_rows(self, seq, s, rows);
      return;
    }
}

// One push to shard s, delayed by its transfer when the network model is on.
void push_grads(self_ptr self, std::size_t s, messages::embedding_grads&& g) {
  const auto& cfg = self->state.cfg;
  if (cfg.net) {
    const auto bytes = header_bytes + g.keys.bytes() + g.grads.bytes();
    const auto d = cfg.net->transfer(cfg.place.host_of_trainer(cfg.trainer),
                                     cfg.place.host_of_embedding(s), bytes, self->clock().now());
    if (d.count() > 0) {
      self->state.push_due[s] = std::max(self->state.push_due[s], self->clock().now() + d);
      self->delayed_send(cfg.shards[s], d, messages::push_atom::value, std::move(g));
      return;
    }
  }
  self->send(cfg.shards[s], messages::push_atom::value, std::move(g));
}

template <class... Ts>
void send_after_pushes(self_ptr self, Ts... xs) {
  auto& st = self->state;
  const auto now = self->clock().now();
  for (std::size_t s = 0; s < st.cfg.shards.size(); ++s) {
    // One microsecond after the last push's arrival: the clock fires it later.
    if (st.cfg.net && st.push_due[s] + std::chrono::microseconds(1) > now)
      self->delayed_send(st.cfg.shards[s], st.push_due[s] + std::chrono::microseconds(1) - now,
                         xs...);
    else
      self->send(st.cfg.shards[s], xs...);
  }
}

template void send_after_pushes(self_ptr, messages::cut_atom, std::uint64_t);
template void send_after_pushes(self_ptr, messages::end_atom);

} // namespace actors::worker_detail
