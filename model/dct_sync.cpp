#include "model/dct_sync.hpp"

#include "model/check.hpp"

namespace model {

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

dct_sender::dct_sender(const dct_settings& s, std::size_t size, std::uint64_t seed,
                       const float* origin)
    : s_(s), tau_(s.dp_keep, s.refresh, seed), image_(size, 0.0f), change_(size, 0.0f), primed_(origin) {
  SS_CHECK(size <= UINT32_MAX, "a dense range of at most 2^32 - 1 entries");
  if (origin)
    image_.assign(origin, origin + size);
}

const sparse_vector& dct_sender::encode_change(const float* w) {
  const std::size_t n = image_.size();
  for (std::size_t i = 0; i < n; ++i)
    change_[i] = w[i] - image_[i];
  // Without an origin the first round sends every entry: the mirror is zero.
  const float tau = primed_ ? tau_.next(change_.data(), n, counts_) : 0.0f;
  threshold(change_.data(), n, tau, out_);
  out_.size = std::uint32_t(n);
  if (s_.rounds_half())
    round_to_half(out_); // the image takes the rounded values: the error stays in w - image
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
  scatter_add(r, image_.data(), -1.0f);
}

dct_mirror::dct_mirror(const dct_settings& s, std::size_t size, std::uint64_t seed,
                       const float* origin)
    : s_(s), tau_(s.reply_keep(), s.refresh, seed), mirror_(size, 0.0f), d_(size, 0.0f) {
  if (origin)
    mirror_.assign(origin, origin + size);
}

const sparse_vector& dct_mirror::exchange(const sparse_vector& s, float* centre, float alpha) {
  const std::size_t n = mirror_.size();
  SS_CHECK(s.size == n, "a change of the range's size");
  scatter_add(s, mirror_.data());
  for (std::size_t i = 0; i < n; ++i) {
    d_[i] = alpha * (mirror_[i] - centre[i]);
    centre[i] += d_[i];
  }
  threshold(d_.data(), n, tau_.next(d_.data(), n, counts_), out_);
  out_.size = std::uint32_t(n);
  if (s_.rounds_half())
    round_to_half(out_);
  if (s_.error_feedback)
    scatter_add(out_, mirror_.data(), -1.0f);
  else
    for (std::size_t i = 0; i < n; ++i)
      mirror_[i] -= d_[i]; // as if the trainer had applied all of d
  counts_.values += out_.nnz();
  counts_.entries += n;
  return out_;
}

} // namespace model
