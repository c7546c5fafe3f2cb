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
//   shard:  mirror += s; d = alpha (mirror - centre); centre += d;
//           r = threshold(d, tau_d); mirror -= r; reply r
//   syncer: w -= r; image -= r
// With half values (dct_settings::rounds_half) s and r are rounded before
// the pictures take them, so the rounding's error stays in w - image and in
// mirror - (where the trainer is), like any other unsent part.
// Error feedback lives in the pictures: what was not sent of w's change stays
// in w - image and goes in a later round; what was not sent of d leaves the
// mirror where the trainer really is, so the next d carries it again. With
// error feedback off the pictures follow the full values instead (image = w,
// mirror -= d): the unsent parts are dropped.
// Each end re-estimates its threshold from a sample (estimate_threshold)
// every `refresh` rounds; keep = 1 sends everything and is exactly dense
// EASGD.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/dct_codec.hpp"

namespace model {

struct dct_settings {
  bool dp = false;              // dct.dp: threshold the dense sync
  double dp_keep = 0.03;        // the fraction of entries meant to pass (dct.dp-keep: 0.003)
  double dp_reply_keep = 0;     // EASGD: the shard's reply's fraction (0: dp_keep; the
                                // option's default is 0.03)
  double reply_keep() const { return dp_reply_keep > 0 ? dp_reply_keep : dp_keep; }
  std::uint64_t refresh = 10;   // rounds (dp) or lookups (mp) between threshold estimates
  bool error_feedback = true;   // dp, and mp's straight pushes (not its mask pushes)
  bool mp = false;              // dct.mp: threshold lookup replies and pushes
  double mp_keep = 0.1;         // the fraction of a reply's entries meant to pass
  bool mp_straight = true;      // dct.mp-backward=straight (model/dct_mp.hpp), else mask
  double mp_grad_keep = 0.01;   // straight: the fraction of gradient entries meant to pass
  bool half = false;            // dct.half: values go as halves where error feedback carries
                                // the rounding (dp, straight pushes; not with it off)
  bool rounds_half() const { return half && error_feedback; }
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

// The syncer's end of one range.
class dct_sender {
public:
  // origin: size floats, or null for zeros (then the first round sends all).
  dct_sender(const dct_settings& s, std::size_t size, std::uint64_t seed,
             const float* origin = nullptr);
  // The round's s from the replica's current values w (size floats).
  const sparse_vector& encode_change(const float* w);
  // The shard's reply r, after the replica applied w -= r.
  void on_reply(const sparse_vector& r);
  const dct_counts& counts() const { return counts_; }
  const std::vector<float>& image() const { return image_; }

private:
  dct_settings s_;
  dct_threshold tau_;
  std::vector<float> image_, change_;
  sparse_vector out_;
  bool primed_ = false; // the pictures hold more than zeros
  dct_counts counts_;
};

// The dense shard's end for one trainer.
class dct_mirror {
public:
  dct_mirror(const dct_settings& s, std::size_t size, std::uint64_t seed,
             const float* origin = nullptr);
  // mirror += s; d = alpha (mirror - centre); centre += d; returns r.
  const sparse_vector& exchange(const sparse_vector& s, float* centre, float alpha);
  const dct_counts& counts() const { return counts_; }
  const std::vector<float>& mirror() const { return mirror_; }

private:
  dct_settings s_;
  dct_threshold tau_;
  std::vector<float> mirror_, d_;
  sparse_vector out_;
  dct_counts counts_;
};

} // namespace model
