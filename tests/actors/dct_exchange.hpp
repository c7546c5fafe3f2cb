#pragma once
// A DCT dense shard and a trainer's thresholded change for it (the peer
// bounds and authority tests).
#include <cstdint>

#include "actors/dense_shard.hpp"
#include "model/dct_codec.hpp"

namespace test {

// A DCT dense shard of 4 entries at offset 10 for a job of `trainers`.
inline actors::dense_shard_config dct_shard(std::uint32_t trainers) {
  actors::dense_shard_config c;
  c.shard = 1;
  c.offset = 10;
  c.initial = {1, 2, 3, 4};
  c.alpha = 0.5f;
  c.num_trainers = trainers;
  c.dct.dp = true;
  c.dct.dp_keep = 1.0; // every entry passes: the reply is exactly d
  return c;
}

// trainer's change: +2 on entry 1 of the 4.
inline messages::sparse_range change_of(std::uint32_t trainer) {
  model::sparse_vector s;
  s.size = 4;
  s.index = {1};
  s.value = {2.0f};
  messages::sparse_range r;
  r.offset = 10;
  r.trainer = trainer;
  r.payload.values = model::encode(s);
  return r;
}

} // namespace test
