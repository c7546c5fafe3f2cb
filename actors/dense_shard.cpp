// Message flow:
//   syncer -> dense shard: exchange(offset, w); dense shard -> syncer: (offset, d) or bad_request
//   coordinator -> dense shard: dump; dense shard -> coordinator: (offset, centre)
#include "actors/dense_shard.hpp"
#include "actors/work.hpp"

#include <cmath>

#include <caf/actor_system.hpp>
#include <spdlog/spdlog.h>

#include "actors/peer.hpp"
#include "messages/errors.hpp"
#include "messages/peer_bounds.hpp"
#include "model/sync_rules.hpp"

namespace actors {

using messages::errc;
using messages::make_error;

std::string dense_shard_state::who() const {
  return std::string{name} + "-" + std::to_string(shard);
}

caf::error dense_shard_state::init(dense_shard_config cfg) {
  shard = cfg.shard;
  offset = cfg.offset;
  alpha = cfg.alpha;
  num_trainers = cfg.num_trainers;
  senders = std::move(cfg.who);
  dct = cfg.dct;
  centre = std::move(cfg.initial);
  if (dct.dp)
    dct_origin = centre;
  if (!std::isfinite(alpha) || alpha < 0.0f || alpha > 1.0f)
    return make_error(errc::bad_request,
                      who() + ": alpha " + std::to_string(alpha) + " outside [0, 1]");
  return {};
}

caf::expected<messages::dense_range> dense_shard_state::exchange(const messages::dense_range& w) {
  if (w.offset != offset || w.values.size() != centre.size())
    return make_error(errc::bad_request,
                      who() + ": exchange of [" + std::to_string(w.offset) + ", +" +
                        std::to_string(w.values.size()) + "), this shard owns [" +
                        std::to_string(offset) + ", +" + std::to_string(centre.size()) + ")");
  messages::dense_range d;
  d.offset = offset;
  d.values.values.resize(centre.size());
  model::easgd_centre_step(centre.data(), w.values.data(), alpha, d.values.data(), centre.size());
  return d;
}

caf::expected<messages::sparse_range>
dense_shard_state::exchange(const messages::sparse_range& s, const caf::actor_addr& sender) {
  const auto from = who() + ": DCT exchange from trainer " + std::to_string(s.trainer);
  // Before the id keys a mirror: a trainer of the plan, spoken for by its own actor.
  if (auto bad = messages::check_sparse_range(s, offset, num_trainers); !bad.empty())
    return make_error(errc::bad_request, from + ": " + bad);
  const auto spoke = speakers.find(s.trainer);
  if (!sender || (spoke != speakers.end() && spoke->second != sender))
    return make_error(errc::bad_request,
                      from + ": trainer " + std::to_string(s.trainer) +
                        "'s mirror answers the actor of its first exchange, not this one");
  model::sparse_vector change;
  if (auto e = model::decode(s.payload.data(), s.payload.size(), std::uint32_t(centre.size()),
                             change))
    return make_error(errc::bad_request, from + ": " + *e);
  if (spoke == speakers.end())
    speakers.emplace(s.trainer, sender);
  auto it = mirrors.find(s.trainer);
  if (it == mirrors.end())
    it = mirrors
           .emplace(s.trainer,
                    model::dct_mirror(dct, centre.size(), (std::uint64_t{shard} << 32) | s.trainer,
                                      dct_origin.data(), offset))
           .first;
  messages::sparse_range r;
  r.offset = offset;
  r.trainer = s.trainer;
  r.payload.values = model::encode(it->second.exchange(change, centre.data(), alpha));
  return r;
}

messages::dense_range dense_shard_state::dump() const {
  messages::dense_range out;
  out.offset = offset;
  out.values.values = centre;
  return out;
}

namespace {

// The log line of a refused exchange: the error's text and its sender.
void refused(dense_shard_actor::stateful_pointer<dense_shard_state> self, const caf::error& err) {
  spdlog::warn("{} (refused; sent by {})", messages::error_text(err),
               peer_name(self->current_sender()));
}

} // namespace

dense_shard_actor::behavior_type
dense_shard(dense_shard_actor::stateful_pointer<dense_shard_state> self, dense_shard_config cfg) {
  if (auto err = self->state.init(std::move(cfg))) {
    spdlog::error("{}", messages::error_text(err, self->system()));
    self->quit(std::move(err));
    return dense_shard_actor::behavior_type::make_empty_behavior();
  }
  return {
    [=](messages::exchange_atom,
        const messages::dense_range& w) -> caf::result<messages::dense_range> {
      const auto& from = self->current_sender();
      if (!self->state.senders.data_plane(from, self->node()))
        return refuse_sender(self->state.who(), "an exchange", from, data_plane_only);
      count(work::elastic_update, double(w.values.size()));
      auto d = self->state.exchange(w);
      if (!d)
        refused(self, d.error());
      return d;
    },
    [=](messages::exchange_atom,
        const messages::sparse_range& s) -> caf::result<messages::sparse_range> {
      const auto& from = self->current_sender();
      if (!self->state.senders.speaks_for(from, s.trainer, self->node()))
        return refuse_sender(self->state.who(),
                             "a DCT exchange for trainer " + std::to_string(s.trainer), from,
                             "this process or that trainer's node");
      count(work::sparse_exchange, double(self->state.centre.size()), 1,
            double(s.payload.size()));
      if (self->state.dct.dp_centre) // centre - c, and the mirror's pull toward c
        count(work::elastic_update, double(self->state.centre.size()));
      auto r = self->state.exchange(s, caf::actor_cast<caf::actor_addr>(self->current_sender()));
      if (!r)
        refused(self, r.error());
      return r;
    },
    [=](messages::dump_atom) -> caf::result<messages::dense_range> {
      const auto& from = self->current_sender();
      if (!self->state.senders.directs(from, self->node()))
        return refuse_sender(self->state.who(), "a dump", from, directors_only);
      return self->state.dump();
    },
  };
}

} // namespace actors
