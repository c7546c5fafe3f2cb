#pragma once
// [dct] options of `train` (DCT, Gupta et al., KDD'21; DESIGN.md section 12;
// docs/dct.md):
//   dct.dp               threshold EASGD's dense sync (s-easgd, fr-easgd)
//   dct.dp-keep          the fraction of a range's entries meant to pass
//   dct.dp-reduce-keep   the same for the ring's reduce (its chunks' steps)
//   dct.refresh          dp: rounds between threshold estimates at each end
//   dct.mp-refresh       mp: lookups or pushes between threshold estimates
//   dct.error-feedback   carry what was not sent into later rounds (dp)
//   dct.mp               threshold lookup replies and pushes (model/dct_mp.hpp)
//   dct.mp-keep          the fraction of a reply's entries meant to pass
//   dct.mp-backward      mask | straight: what a push carries
//   dct.mp-grad-keep     straight: the fraction of a push's entries meant to pass
//   dct.dp-reply, dct.per-layer, dct.log8, dct.mp-half-rows, dct.mp-drop-rows,
//   dct.mp-push-places:
//                        the reply's form, per-layer thresholds, the values' form,
//                        how a push names its rows
//                        (docs/options.md)
#include <optional>
#include <string>
#include <vector>

#include "model/arch.hpp"
#include "model/dct_sync.hpp"
#include "model/sync_rules.hpp"
#include "config/modes.hpp"
#include "config/options.hpp"

namespace runtime {

void add_dct_options(option_set& o);

// Reads the options; errors name the key. dct.dp needs a cluster mode and an
// EASGD algorithm; dct.mp a cluster mode.
std::optional<std::string> build_dct_settings(const option_set& o, cluster_mode mode,
                                              model::sync_algorithm algorithm,
                                              model::dct_settings& out);

// The offsets where each layer of a's MLPs (and cross layers) starts in the
// dense replica: dct.per-layer's segments.
std::vector<std::size_t> dct_layer_starts(const model::arch& a);

// dct.mp-refresh=0: 1 below a batch of 128, else 10. Below it a shard's reply
// holds a few rows of each table (at 16 trainers, batch 16: about 4 a shard),
// and an estimate from them, held for the next 9 replies, lost eval NE
// (docs/dct.md); at 128 one estimate serves the next 9 as well as each its
// own, and estimating every reply cost 1.22x the wall time at 2 trainers.
std::uint64_t auto_mp_refresh(std::size_t batch_size);

} // namespace runtime
