#include "model/dct_sync.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/check.hpp"
#include "model/dct_mask.hpp"
#include "model/sync_rules.hpp"

namespace model {

namespace {

// x -= alpha (x - c): the one place both pictures take the pull, so the
// syncer's image and the shard's mirror get the same bits.
void pull_toward(float* x, const float* c, float alpha, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    x[i] -= alpha * (x[i] - c[i]);
}

} // namespace

float dct_threshold::next(const float* x, std::size_t n, dct_counts& c) {
  if (uses_++ % refresh_ == 0) {
    tau_ = estimate_threshold(x, n, keep_, seed_ + uses_);
    ++c.refreshes;
    // 0 from a sample of zeros (a syncer's first round can come before any
    // batch changed its replica) would let every later nonzero entry pass
    // until the next refresh: estimate again next time instead.
    if (tau_ == 0.0f && keep_ < 1.0)
      uses_ = 0;
  }
  return tau_;
}

dct_layer_thresholds::dct_layer_thresholds(double keep, std::uint64_t refresh,
                                           std::uint64_t seed,
                                           std::vector<std::size_t> bounds)
    : bounds_(std::move(bounds)) {
  SS_CHECK(bounds_.size() >= 2 && bounds_.front() == 0, "segments from 0 to the size");
  for (std::size_t i = 0; i + 1 < bounds_.size(); ++i) {
    SS_CHECK(bounds_[i] < bounds_[i + 1] || bounds_.size() == 2,
             "segments of at least one entry, in order");
    taus_.emplace_back(keep, refresh, seed + 7919 * i);
  }
  now_.assign(taus_.size(), 0.0f);
}

void dct_layer_thresholds::apply(const float* x, sparse_vector& out, dct_counts& c, bool all) {
  const std::size_t n = size();
  SS_CHECK(n <= 0xFFFFFFFFu, "a vector of at most 2^32 - 1 entries");
  for (std::size_t i = 0; i < taus_.size(); ++i)
    now_[i] = all ? 0.0f : taus_[i].next(x + bounds_[i], bounds_[i + 1] - bounds_[i], c);
  out.size = std::uint32_t(n);
  out.half = false;
  out.log8 = false;
  out.index.clear(); // the capacity stays: no zeroing of a whole range each round
  out.value.clear();
  for (std::size_t i = 0; i < taus_.size(); ++i) {
    const float tau = now_[i];
    std::size_t j = bounds_[i];
    const std::size_t end = bounds_[i + 1];
    // The same entries in the same order as one at a time (bench_dct).
    dct_mask::append_sent(x + j, end - j, tau, j, out.index, out.value);
  }
}

std::vector<std::size_t> dct_segments(const std::vector<std::size_t>& layer_starts,
                                      std::size_t offset, std::size_t size) {
  std::vector<std::size_t> b{0};
  for (const std::size_t at : layer_starts)
    if (at > offset && at < offset + size)
      b.push_back(at - offset);
  b.push_back(size);
  return b;
}

namespace {

std::vector<std::size_t> segments_of(const dct_settings& s, std::size_t offset, std::size_t size) {
  return s.per_layer ? dct_segments(s.layer_starts, offset, size)
                     : std::vector<std::size_t>{0, size};
}

} // namespace

dct_chunk_thresholds::dct_chunk_thresholds(const dct_settings& s, std::size_t size,
                                           std::size_t parts, std::uint64_t seed)
    : s_(s) {
  const auto chunks = split_range(size, parts);
  for (std::size_t c = 0; c < chunks.size(); ++c)
    taus_.emplace_back(s.reduce_keep(), s.refresh, seed + 104729 * c,
                       segments_of(s, chunks[c].offset, chunks[c].size));
}

void dct_chunk_thresholds::take(std::size_t chunk, float* x, sparse_vector& out, dct_counts& c,
                                bool all, bool round) {
  SS_CHECK(chunk < taus_.size(), "dct_chunk_thresholds: a chunk of the split");
  taus_[chunk].apply(x, out, c, all);
  if (round)
    s_.round_dp(out);
  for (std::size_t k = 0; k < out.nnz(); ++k)
    x[out.index[k]] -= out.value[k];
}

dct_sender::dct_sender(const dct_settings& s, std::size_t size, std::uint64_t seed,
                       const float* origin, std::size_t offset)
    : s_(s), tau_(s.dp_keep, s.refresh, seed, segments_of(s, offset, size)),
      image_(size, 0.0f), change_(size, 0.0f), primed_(origin) {
  SS_CHECK(size <= UINT32_MAX, "a dense range of at most 2^32 - 1 entries");
  if (origin)
    image_.assign(origin, origin + size);
  if (s_.dp_centre)
    centre_ = image_;
}

const sparse_vector& dct_sender::encode_change(const float* w) {
  const std::size_t n = image_.size();
  for (std::size_t i = 0; i < n; ++i)
    change_[i] = w[i] - image_[i];
  // Without an origin the first round sends every entry: the mirror is zero.
  tau_.apply(change_.data(), out_, counts_, !primed_);
  s_.round_dp(out_); // the image takes the rounded values: the error stays in w - image
  if (s_.error_feedback || !primed_)
    scatter_add(out_, image_.data());
  else
    image_.assign(w, w + n); // the unsent change is dropped
  primed_ = true;
  counts_.values += out_.nnz();
  counts_.entries += n;
  return out_;
}

void dct_sender::on_reply(const sparse_vector& r) {
  SS_CHECK(r.size == image_.size(), "a reply of the range's size");
  if (!s_.dp_centre) {
    scatter_add(r, image_.data(), -1.0f);
    return;
  }
  scatter_add(r, centre_.data());
  pull_toward(image_.data(), centre_.data(), s_.dp_alpha, image_.size());
}

const std::vector<float>& dct_sender::pull(const float* w) {
  SS_CHECK(s_.dp_centre, "a pull with the centre reply");
  for (std::size_t i = 0; i < centre_.size(); ++i)
    change_[i] = s_.dp_alpha * (w[i] - centre_[i]);
  return change_;
}

dct_mirror::dct_mirror(const dct_settings& s, std::size_t size, std::uint64_t seed,
                       const float* origin, std::size_t offset)
    : s_(s), tau_(s.reply_keep(), s.refresh, seed, segments_of(s, offset, size)),
      mirror_(size, 0.0f), primed_(origin) {
  if (!s_.dp_centre && s_.error_feedback)
    owed_.assign(size, 0.0f); // the d reply with error feedback
  else
    d_.assign(size, 0.0f);
  if (origin)
    mirror_.assign(origin, origin + size);
  if (s_.dp_centre)
    centre_ = mirror_;
}

const sparse_vector& dct_mirror::exchange(const sparse_vector& s, float* centre, float alpha) {
  const std::size_t n = mirror_.size();
  SS_CHECK(s.size == n, "a change of the range's size");
  scatter_add(s, mirror_.data());
  if (!owed_.empty()) {
    // The trainer stands at mirror - owed once it has heard all of its pull,
    // and that is the replica dense EASGD would step toward: the centre
    // takes alpha of the gap from there, and the trainer owes the same (it
    // goes when it crosses tau). A d taken from the mirror instead would
    // drop the unsent pull: the centre absorbs it, and with many trainers
    // holding the centre a small pull is never sent at all.
    for (std::size_t i = 0; i < n; ++i) {
      const float d = alpha * (mirror_[i] - owed_[i] - centre[i]);
      centre[i] += d;
      owed_[i] += d;
    }
    tau_.apply(owed_.data(), out_, counts_);
    s_.round_dp(out_);
    scatter_add(out_, mirror_.data(), -1.0f);
    scatter_add(out_, owed_.data(), -1.0f);
    counts_.values += out_.nnz();
    counts_.entries += n;
    return out_;
  }
  for (std::size_t i = 0; i < n; ++i) {
    d_[i] = alpha * (mirror_[i] - centre[i]);
    centre[i] += d_[i];
  }
  if (s_.dp_centre)
    for (std::size_t i = 0; i < n; ++i)
      d_[i] = centre[i] - centre_[i]; // what the trainer does not know of the centre
  // Without an origin the first reply sends every entry: the trainer's c is zero.
  tau_.apply(d_.data(), out_, counts_, s_.dp_centre && !primed_);
  s_.round_dp(out_);
  if (s_.dp_centre) {
    scatter_add(out_, centre_.data());
    pull_toward(mirror_.data(), centre_.data(), s_.dp_alpha, n);
    primed_ = true;
  } else { // without error feedback (with it the pull is owed, above)
    for (std::size_t i = 0; i < n; ++i)
      mirror_[i] -= d_[i]; // as if the trainer had applied all of d
  }
  counts_.values += out_.nnz();
  counts_.entries += n;
  return out_;
}

} // namespace model
