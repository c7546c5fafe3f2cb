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
//   thresholded change s to it, steps the centre from the mirror and replies
//   the thresholded d. A payload that does not decode to this range's size
//   is refused with bad_request naming the trainer.
// - dump -> dense_range{offset, c}: the current centre (evaluation,
//   checkpoints).
//
// A config with alpha outside [0, 1] (or not finite) makes the actor quit at
// spawn with bad_request.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/interfaces.hpp"
#include "model/dct_sync.hpp"

namespace actors {

struct dense_shard_config {
  std::uint32_t shard = 0;    // index, for logs and errors
  std::uint64_t offset = 0;   // first element of the range in the flat buffer
  std::vector<float> initial; // initial centre; its size is the range size
  float alpha = 0.1f;         // EASGD moving rate, typically 0.5/N .. 0.9/N
  // dct.dp: the thresholds of the replies. The trainers' mirrors start at
  // `initial` (the syncers' dct_origin must hold the same values).
  model::dct_settings dct;
};

struct dense_shard_state {
  static inline const char* name = "dense-shard";

  std::uint32_t shard = 0;
  std::uint64_t offset = 0;
  float alpha = 0.1f;
  std::vector<float> centre; // [size]
  model::dct_settings dct;
  std::map<std::uint32_t, model::dct_mirror> mirrors; // DCT: one per trainer
  std::vector<float> dct_origin; // where a trainer's mirror starts: the initial centre

  // "dense-shard-S", for logs and error messages.
  std::string who() const;
  // Takes over the config (moves the initial centre); bad_request if invalid.
  caf::error init(dense_shard_config cfg);
  // One elastic step: the reply d, or bad_request for a range not this one's.
  caf::expected<messages::dense_range> exchange(const messages::dense_range& w);
  caf::expected<messages::sparse_range> exchange(const messages::sparse_range& s);
  messages::dense_range dump() const;
};

dense_shard_actor::behavior_type
dense_shard(dense_shard_actor::stateful_pointer<dense_shard_state> self, dense_shard_config cfg);

} // namespace actors
