#pragma once
// dense_shard: owns the EASGD centre variable c for one contiguous range
// [offset, offset + size) of the flat dense parameter buffer (S-EASGD and
// FR-EASGD; the ranges come from model::split_range over the dense layout).
//
// Protocol (dense_shard_actor in interfaces.hpp):
// - exchange(dense_range{offset, w}) -> dense_range{offset, d}: the elastic
//   step of model::easgd_centre_step, d = alpha (w - c); c += d. The syncer
//   then applies w -= d to its live replica. The request must cover exactly
//   this shard's range (same offset, same size); otherwise the reply is
//   errc::bad_request "dense-shard-S: ..." and the centre is unchanged.
//   Exchanges from different trainers are applied one at a time, in mailbox
//   order.
// - exchange(sparse_range{offset, trainer, s}) -> sparse_range{offset,
//   trainer, r}: the same step through DCT (dct.dp, model/dct_sync.hpp): the
//   shard keeps a mirror of each trainer's range, adds the trainer's
//   thresholded change s to it, steps the centre from the mirror less the
//   trainer's debt (the pull not yet sent), adds d to the debt and replies
//   the thresholded debt (with dct.dp-reply=centre: the thresholded change of
//   the centre since the trainer last heard). A payload that does not decode
//   to this range's size is refused with bad_request naming the trainer. So
//   is a trainer id not below cfg.num_trainers (each id keys a mirror of two
//   range-sized vectors, three with the centre reply), and an exchange for a trainer whose mirror another actor made:
//   a mirror answers the actor of its trainer's first accepted exchange (its
//   syncer) only. A refusal is logged with the sender and changes nothing.
// - dump -> dense_range{offset, c}: the current centre (evaluation,
//   checkpoints).
//
// A config with alpha outside [0, 1] (or not finite) makes the actor quit at
// spawn with bad_request.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/authority.hpp"
#include "actors/interfaces.hpp"
#include "model/dct_sync.hpp"

namespace actors {

struct dense_shard_config {
  std::uint32_t shard = 0;    // index, for logs and errors
  std::uint64_t offset = 0;   // first element of the range in the flat buffer
  std::vector<float> initial; // initial centre; its size is the range size
  float alpha = 0.1f;         // EASGD moving rate (sync.alpha, default 0.25)
  // cluster.trainers: a DCT exchange names a trainer id below it (each id
  // keys a mirror of the range); 0 admits none.
  std::uint32_t num_trainers = 0;
  // dct.dp: the thresholds of the replies. The trainers' mirrors start at
  // `initial` (the syncers' dct_origin must hold the same values).
  model::dct_settings dct;
  // Who may send what (multi-node: filled by the node agent from the plan).
  authority who;
};

struct dense_shard_state {
  static inline const char* name = "dense-shard";

  std::uint32_t shard = 0;
  std::uint64_t offset = 0;
  float alpha = 0.1f;
  std::vector<float> centre; // [size]
  model::dct_settings dct;
  std::uint32_t num_trainers = 0; // DCT: trainer ids are below it
  authority senders;              // who may send what
  std::map<std::uint32_t, model::dct_mirror> mirrors; // DCT: one per trainer
  std::map<std::uint32_t, caf::actor_addr> speakers;  // DCT: the actor each mirror answers
  std::vector<float> dct_origin; // where a trainer's mirror starts: the initial centre

  // "dense-shard-S", for logs and error messages.
  std::string who() const;
  // Takes over the config (moves the initial centre); bad_request if invalid.
  caf::error init(dense_shard_config cfg);
  // One elastic step: the reply d, or bad_request for a range not this one's.
  caf::expected<messages::dense_range> exchange(const messages::dense_range& w);
  // DCT: `sender` is the requesting actor (a trainer's syncer).
  caf::expected<messages::sparse_range> exchange(const messages::sparse_range& s,
                                                 const caf::actor_addr& sender);
  messages::dense_range dump() const;
};

dense_shard_actor::behavior_type
dense_shard(dense_shard_actor::stateful_pointer<dense_shard_state> self, dense_shard_config cfg);

} // namespace actors
