#include "actors/sparse_ring_reduce.hpp"

#include "model/check.hpp"

namespace actors {

sparse_ring_reduce::sparse_ring_reduce(std::uint32_t rank, std::uint32_t n, std::uint32_t size,
                                       send_fn send, take_fn take, std::uint32_t generation)
    : rank_(rank), n_(n), size_(size), send_(std::move(send)), take_(std::move(take)),
      generation_(generation), chunks_(model::split_range(size, n)), agreed_(n),
      stash_(max_early(n)) {
  SS_CHECK(n >= 1 && rank < n, "sparse_ring_reduce: rank within the ring");
}

std::uint32_t sparse_ring_reduce::sent_chunk(std::uint32_t step) const {
  if (step < n_ - 1)
    return (rank_ + n_ - step) % n_; // reduce-scatter: rank - s
  const std::uint32_t t = step - (n_ - 1);
  return (rank_ + 1 + n_ - t) % n_; // all-gather: rank + 1 - t
}

std::string sparse_ring_reduce::begin(std::uint64_t round, float* acc) {
  SS_CHECK(!active() && round > round_, "sparse_ring_reduce: a new round starts after the last");
  round_ = round;
  step_ = 0;
  acc_ = acc;
  received_ = taken_ = 0;
  done_ = n_ == 1;
  if (done_) {
    take_(0, acc_, size_, agreed_[0]);
    taken_ += agreed_[0].nnz();
    return {};
  }
  send_taken(0);
  return drain(); // a faster neighbour may already have sent this round's payloads
}

void sparse_ring_reduce::send_taken(std::uint32_t step) {
  const auto c = sent_chunk(step);
  const auto& r = chunks_[c];
  // A reduce-scatter step sends a partial sum; the first all-gather step
  // the agreed sum of the chunk this member owns.
  auto& out = step < n_ - 1 ? scratch_ : agreed_[c];
  take_(c, acc_ + r.offset, r.size, out);
  taken_ += out.nnz();
  messages::ring_sparse p;
  p.generation = generation_;
  p.round = round_;
  p.origin = c;
  p.step = step;
  p.payload.values = model::encode(out);
  send_(std::move(p));
}

std::string sparse_ring_reduce::receive(messages::ring_sparse&& piece) {
  if (piece.step >= steps())
    return "ring payload with step " + std::to_string(piece.step) + " of " +
           std::to_string(steps());
  const bool current = piece.round == round_ && active();
  if (piece.round < round_ || (piece.round == round_ && !current) ||
      (current && piece.step < step_))
    return "stale ring payload: round " + std::to_string(piece.round) + " step " +
           std::to_string(piece.step) + ", expected round " + std::to_string(round_) +
           " step " + std::to_string(step_);
  if (!current || piece.step > step_) {
    const auto what = "ring payload: round " + std::to_string(piece.round) + " step " +
                      std::to_string(piece.step);
    return stash_.keep(piece.round, piece.step, std::move(piece), what);
  }
  if (auto err = apply(std::move(piece)); !err.empty())
    return err;
  return drain();
}

std::string sparse_ring_reduce::apply(messages::ring_sparse&& piece) {
  const auto c = received_chunk(step_);
  const auto& r = chunks_[c];
  if (piece.origin != c)
    return "ring payload of chunk " + std::to_string(piece.origin) + " at step " +
           std::to_string(step_) + " of round " + std::to_string(round_) + ", expected chunk " +
           std::to_string(c);
  const bool reducing = step_ < n_ - 1;
  auto& got = reducing ? scratch_ : agreed_[c];
  if (auto err = model::decode(piece.payload.data(), piece.payload.size(), std::uint32_t(r.size),
                               got))
    return "ring payload of chunk " + std::to_string(c) + ", round " + std::to_string(round_) +
           ", step " + std::to_string(step_) + ": " + *err;
  received_ += got.nnz();
  if (reducing) {
    model::scatter_add(got, acc_ + r.offset);
  } else if (step_ + 1 < steps()) { // pass the agreed sum on, unless the next member owns it
    piece.step = step_ + 1;
    send_(std::move(piece));
  }
  if (++step_ == steps())
    done_ = true;
  else if (step_ <= n_ - 1)
    send_taken(step_);
  return {};
}

std::string sparse_ring_reduce::drain() {
  return stash_.drain(
    round_, [this] { return active(); }, [this] { return step_; },
    [this](messages::ring_sparse&& p) { return apply(std::move(p)); });
}

void sparse_ring_reduce::add_sum(float* dst, float scale) const {
  SS_CHECK(done(), "sparse_ring_reduce: the sum of a completed round");
  for (std::uint32_t c = 0; c < n_; ++c)
    model::scatter_add(agreed_[c], dst + chunks_[c].offset, scale);
}

} // namespace actors
