// shadow_syncer with the network model (cfg.net; see shadow_syncer.hpp):
//   exchange replies held until t + d_req + d_rep, then syncer -> syncer: tick(shard)
//   ring chunks: delayed_send to the next syncer with their transfer delay
#include <caf/actor_system.hpp>

#include "actors/shadow_syncer.hpp"

namespace actors {

namespace {
constexpr std::uint64_t header_bytes = 16; // offset and length of a message
}

void syncer_state::note_exchange(std::size_t shard, std::uint64_t bytes) {
  const auto me = cfg.place.host_of_trainer(cfg.trainer);
  const auto there = cfg.place.host_of_dense(shard);
  const auto sent = self->clock().now();
  const auto d_req = cfg.net->transfer(me, there, header_bytes + bytes, sent);
  const auto d_rep = cfg.net->transfer(there, me, header_bytes + bytes, sent + d_req);
  exchange_due[shard] = sent + d_req + d_rep;
}

void syncer_state::on_exchange_arrival(std::size_t shard, messages::dense_range& d) {
  if (cfg.net) {
    const auto now = self->clock().now();
    if (exchange_due[shard] > now) {
      held[shard] = std::move(d);
      self->delayed_send(self, exchange_due[shard] - now, messages::tick_atom::value,
                         std::uint64_t{shard});
      return;
    }
  }
  on_exchange_reply(shard, d);
}

void syncer_state::on_held_exchange(std::uint64_t shard) {
  if (stopped || shard >= held.size() || !held[shard])
    return;
  auto d = std::move(*held[shard]);
  held[shard].reset();
  on_exchange_reply(shard, d);
}

void syncer_state::send_chunk(messages::ring_chunk&& c) {
  if (cfg.net) {
    const auto d = cfg.net->transfer(cfg.place.host_of_trainer(cfg.trainer), next_host,
                                     header_bytes + c.values.bytes(), self->clock().now());
    if (d.count() > 0) {
      self->delayed_send(next, d, messages::ring_atom::value, std::move(c));
      return;
    }
  }
  self->send(next, messages::ring_atom::value, std::move(c));
}

} // namespace actors
