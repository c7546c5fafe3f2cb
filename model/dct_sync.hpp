#pragma once
// DCT for EASGD's dense synchronisation (DESIGN.md section 12; issue 13).
// Pure math: the actors carry the encoded vectors (model/dct_codec.hpp).
//
// Each (trainer, dense range) pair has two pictures of the trainer's replica
// w, one at each end, which start at the same origin (the centre at spawn,
// which is where every trainer starts a fresh run) and change only by what
// crosses the wire, so they stay bit-identical:
//   the syncer's  image  (dct_sender)
//   the shard's   mirror (dct_mirror)
// A round:
//   syncer: s = threshold(w - image, tau_w); image += s; send s
//           (with no origin both start at zero and the first round sends
//           every entry)
//   shard:  mirror += s; d = alpha (mirror - owed - centre); centre += d;
//           owed += d; r = threshold(owed, tau_d); owed -= r; mirror -= r;
//           reply r
//   syncer: w -= r; image -= r
// With half values (dct_settings::rounds_half) s and r are rounded before
// the pictures take them, so the rounding's error stays in w - image and in
// mirror - (where the trainer is), like any other unsent part.
// Error feedback: what was not sent of w's change stays in w - image and
// goes in a later round; what was not sent of the pull stays in `owed` (the
// shard's, one per trainer) and goes when it crosses tau. The centre steps
// toward mirror - owed, where the trainer stands once it has heard all of
// its pull, which is where dense EASGD's replica stands: with the whole
// change sent, the centre is dense EASGD's whatever the reply keep
// (tests/model/dct_sync_test.cpp). With error feedback off the pictures
// follow the full values instead (image = w, mirror -= d, no debt): the
// unsent parts are dropped.
// Each end re-estimates its threshold from a sample (estimate_threshold)
// every `refresh` rounds; keep = 1 sends everything and is exactly dense
// EASGD.
//
// The centre reply (dct_settings::dp_centre, the default) replaces the
// shard's half of the round: each end also keeps a picture c of the centre
// as the trainer knows it (bit-identical, like image and mirror), and
//   shard:  mirror += s; centre += alpha (mirror - centre);
//           r = threshold(centre - c, tau_c); c += r;
//           mirror -= alpha (mirror - c); reply r
//   syncer: c += r; image -= alpha (image - c);
//           w -= alpha (w - c) (pull(), dense, on the live replica)
// so the trainer's elastic pull is never thresholded (only the centre it
// pulls toward lags by what was not sent of the centre's change), and what
// the trainer did not learn of the centre stays in centre - c for a later
// reply. keep = 1 is then EASGD that pulls toward the stepped centre.
// Measured (docs/dct.md), it loses more eval NE than the d reply at the
// same bytes: most entries of c lag the centre by many rounds, and a dense
// pull toward an old centre drags the replica back.
//
// Each threshold is re-estimated every `refresh` rounds from its own
// change. Held fixed for longer (the paper re-estimates every few thousand
// iterations), a threshold lets more and more through as error feedback
// accumulates the unsent entries (docs/dct.md measures it).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/dct_codec.hpp"

namespace model {

struct dct_settings {
  bool dp = false;              // dct.dp: threshold the dense sync
  double dp_keep = 0.03;        // the fraction of entries meant to pass (dct.dp-keep: 0.003)
  double dp_reply_keep = 0;     // EASGD: the shard's reply's fraction (0: dp_keep; the
                                // option's default is 0.025)
  double reply_keep() const { return dp_reply_keep > 0 ? dp_reply_keep : dp_keep; }
  double dp_reduce_keep = 0;    // dct.dp-ring=reduce: the chunks' fraction (0: dp_keep; the
                                // option's default is 0.006)
  double reduce_keep() const { return dp_reduce_keep > 0 ? dp_reduce_keep : dp_keep; }
  bool dp_centre = false;       // dct.dp-reply=centre: the reply is the centre's change, the
                                // pull is the trainer's (above); false (d, the option's
                                // default): the reply is d
  float dp_alpha = 0.25f;       // sync.alpha: the centre reply's pull, at both ends
  std::uint64_t refresh = 10;   // dp: rounds between threshold estimates
  std::uint64_t mp_refresh = 1; // mp: lookups of a table (a shard) or pushes (a worker) between
                                // threshold estimates (option: derived from the batch,
                                // config/dct_config.hpp auto_mp_refresh)
  bool dp_ring_reduce = false;  // dct.dp-ring=reduce: MA/BMUF re-threshold partial sums
                                // (actors/sparse_ring_reduce.hpp); false: the all-gather
  bool per_layer = false;       // dct.per-layer: one threshold per layer (option: true)
  std::vector<std::size_t> layer_starts; // the replica's layers' offsets (dense_layout), set
                                         // with per_layer
  bool error_feedback = true;   // dp, and mp's straight pushes (not its mask pushes)
  bool mp = false;              // dct.mp: threshold lookup replies and pushes
  double mp_keep = 0.1;         // the fraction of a reply's entries meant to pass (option: 0.12)
  bool mp_straight = true;      // dct.mp-backward=straight (model/dct_mp.hpp), else mask
  double mp_grad_keep = 0.01;   // straight: the fraction of gradient entries meant to pass
  bool mp_half_rows = false;    // dct.mp-half-rows: replies' values as halves (option: true)
  bool mp_drop_rows = false;    // dct.mp-drop-rows: pushes name only the rows they change
                                // (option: true)
  bool mp_push_places = false;  // dct.mp-push-places: pushes name their rows by place in
                                // the batch's lookup, not by key (option: true)
  bool half = false;            // dct.half: values go as halves where error feedback carries
                                // the rounding (dp, straight pushes; not with it off)
  bool rounds_half() const { return half && error_feedback; }
  bool log8 = false;            // dct.log8: dp's values go as 8-bit logarithms (dct_codec.hpp)
                                // where error feedback carries the rounding (option: true;
                                // wins over half)
  bool rounds_log8() const { return log8 && error_feedback; }
  // dp: the values of v as they go (the rounding's error stays in the pictures).
  void round_dp(sparse_vector& v) const {
    if (rounds_log8())
      round_to_log8(v);
    else if (rounds_half())
      round_to_half(v);
  }
};

// What one end of a channel sent, summed.
struct dct_counts {
  std::uint64_t values = 0;    // entries sent
  std::uint64_t entries = 0;   // entries they were chosen from
  std::uint64_t refreshes = 0; // threshold estimates
  void add(const dct_counts& o) {
    values += o.values;
    entries += o.entries;
    refreshes += o.refreshes;
  }
};

// The threshold of one end: re-estimated on the first use and then every
// `refresh` uses; an estimate of 0 (a change of zeros) is redone on the next.
class dct_threshold {
public:
  dct_threshold(double keep, std::uint64_t refresh, std::uint64_t seed)
      : keep_(keep), refresh_(refresh ? refresh : 1), seed_(seed) {}
  // tau for x (n entries); counts a refresh in c when it re-estimates.
  float next(const float* x, std::size_t n, dct_counts& c);
  // Whether the next call of next() re-estimates (so x is read).
  bool due() const { return uses_ % refresh_ == 0; }

private:
  double keep_;
  std::uint64_t refresh_;
  std::uint64_t seed_;
  std::uint64_t uses_ = 0;
  float tau_ = 0;
};

// One threshold per layer of a range (the paper's per-layer thresholds):
// bounds are the segments' starts in the range, then its size (at least
// {0, size}); each segment's tau is estimated from its own entries.
class dct_layer_thresholds {
public:
  dct_layer_thresholds(double keep, std::uint64_t refresh, std::uint64_t seed,
                       std::vector<std::size_t> bounds);
  // out = the entries of x (bounds.back() floats) at or above their
  // segment's tau; every nonzero entry when `all`. Counts estimates in c.
  void apply(const float* x, sparse_vector& out, dct_counts& c, bool all = false);
  std::size_t size() const { return bounds_.back(); }
  std::size_t segments() const { return taus_.size(); }

private:
  std::vector<std::size_t> bounds_;
  std::vector<dct_threshold> taus_;
  std::vector<float> now_;
};

// The segment bounds of [offset, offset + size) cut at the layer starts
// (absolute offsets in the replica, increasing; empty: one segment).
std::vector<std::size_t> dct_segments(const std::vector<std::size_t>& layer_starts,
                                      std::size_t offset, std::size_t size);

// dct.dp-ring=reduce (actors/sparse_ring_reduce.hpp): the thresholds of a
// replica of `size` entries split into `parts` chunks (split_range), each
// chunk's cut at the layers with s.per_layer; keep s.reduce_keep(), refresh
// s.refresh per chunk (a member thresholds a given chunk at the same step
// of every round, so its partial sums are of the same members each time).
class dct_chunk_thresholds {
public:
  dct_chunk_thresholds(const dct_settings& s, std::size_t size, std::size_t parts,
                       std::uint64_t seed);
  // out = the entries of chunk c of the accumulator (x: the chunk's
  // entries) at or above their tau, every nonzero one when `all`, rounded
  // as s.round_dp rounds them when `round` (else f32, exact); x loses
  // exactly what out holds (the rounding's error stays in x). Counts
  // estimates in c.
  void take(std::size_t chunk, float* x, sparse_vector& out, dct_counts& c, bool all,
            bool round = true);

private:
  dct_settings s_;
  std::vector<dct_layer_thresholds> taus_;
};

// The syncer's end of one range.
class dct_sender {
public:
  // origin: size floats, or null for zeros (then the first round sends all).
  // offset: where the range starts in the replica (its layers' segments).
  dct_sender(const dct_settings& s, std::size_t size, std::uint64_t seed,
             const float* origin = nullptr, std::size_t offset = 0);
  // The round's s from the replica's current values w (size floats).
  const sparse_vector& encode_change(const float* w);
  // The shard's reply r: with the d reply after the replica applied
  // w -= r; with the centre reply before pull().
  void on_reply(const sparse_vector& r);
  // The centre reply: alpha (w - c) for the live values w (size floats), to
  // be subtracted from them (valid until the next call).
  const std::vector<float>& pull(const float* w);
  const dct_counts& counts() const { return counts_; }
  const std::vector<float>& image() const { return image_; }
  const std::vector<float>& centre() const { return centre_; } // the centre reply's c

private:
  dct_settings s_;
  dct_layer_thresholds tau_;
  std::vector<float> image_, change_, centre_;
  sparse_vector out_;
  bool primed_ = false; // the pictures hold more than zeros
  dct_counts counts_;
};

// The dense shard's end for one trainer.
class dct_mirror {
public:
  dct_mirror(const dct_settings& s, std::size_t size, std::uint64_t seed,
             const float* origin = nullptr, std::size_t offset = 0);
  // mirror += s; d = alpha (mirror - owed - centre); centre += d; owed += d;
  // returns r, the part of owed at or above tau (then taken off owed and
  // the mirror).
  const sparse_vector& exchange(const sparse_vector& s, float* centre, float alpha);
  // With the centre reply: mirror += s; centre += alpha (mirror - centre);
  // r = threshold(centre - c); c += r; mirror -= alpha (mirror - c).
  const dct_counts& counts() const { return counts_; }
  const std::vector<float>& mirror() const { return mirror_; }
  const std::vector<float>& centre() const { return centre_; } // the centre reply's c

private:
  dct_settings s_;
  dct_layer_thresholds tau_;
  std::vector<float> mirror_, d_, centre_;
  std::vector<float> owed_; // the d reply with error feedback: the pull not yet sent
  sparse_vector out_;
  bool primed_ = false; // c holds more than zeros
  dct_counts counts_;
};

} // namespace model
