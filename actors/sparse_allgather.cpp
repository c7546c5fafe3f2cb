#include "actors/sparse_allgather.hpp"

#include "model/check.hpp"

namespace actors {

sparse_allgather::sparse_allgather(std::uint32_t rank, std::uint32_t n, std::uint32_t size,
                                   send_fn send, std::uint32_t generation)
    : rank_(rank), n_(n), size_(size), send_(std::move(send)), generation_(generation), got_(n),
      stash_(max_early(n)) {
  SS_CHECK(n >= 1 && rank < n, "sparse_allgather: rank within the ring");
}

std::string sparse_allgather::begin(std::uint64_t round, const model::sparse_vector& own) {
  SS_CHECK(!active() && round > round_, "sparse_allgather: a new round starts after the last");
  SS_CHECK(own.size == size_, "sparse_allgather: this member's vector has the agreed size");
  round_ = round;
  step_ = 0;
  begun_ = true;
  got_[rank_] = own;
  done_ = n_ == 1;
  if (done_)
    return {};
  messages::ring_sparse out;
  out.generation = generation_;
  out.round = round_;
  out.origin = rank_;
  out.payload.values = model::encode(own);
  send_(std::move(out));
  return drain(); // a faster neighbour may already have sent this round's vectors
}

std::string sparse_allgather::receive(messages::ring_sparse&& piece) {
  if (piece.origin >= n_ || piece.origin == rank_)
    return "ring vector from member " + std::to_string(piece.origin) + " at member " +
           std::to_string(rank_) + " of " + std::to_string(n_);
  const std::uint32_t step = (rank_ + 2 * n_ - 1 - piece.origin) % n_; // origin_at(step) == origin
  const bool current = piece.round == round_ && active();
  if (piece.round < round_ || (piece.round == round_ && !current) ||
      (current && step < step_))
    return "stale ring vector: round " + std::to_string(piece.round) + " from member " +
           std::to_string(piece.origin) + ", expected round " + std::to_string(round_) +
           " from member " + std::to_string(origin_at(step_));
  if (!current || step > step_) {
    const auto what = "ring vector: round " + std::to_string(piece.round) + " from member " +
                      std::to_string(piece.origin);
    return stash_.keep(piece.round, step, std::move(piece), what);
  }
  if (auto err = apply(std::move(piece)); !err.empty())
    return err;
  return drain();
}

std::string sparse_allgather::apply(messages::ring_sparse&& piece) {
  const auto origin = origin_at(step_);
  if (auto err = model::decode(piece.payload.data(), piece.payload.size(), size_, got_[origin]))
    return "ring vector of round " + std::to_string(piece.round) + " from member " +
           std::to_string(origin) + ": " + *err;
  if (step_ + 2 < n_) // the next member is not its origin: pass it on
    send_(std::move(piece));
  if (++step_ == n_ - 1)
    done_ = true;
  return {};
}

std::string sparse_allgather::drain() {
  return stash_.drain(
    round_, [this] { return active(); }, [this] { return step_; },
    [this](messages::ring_sparse&& p) { return apply(std::move(p)); });
}

void sparse_allgather::add_sum(float* dst, float scale) const {
  SS_CHECK(done(), "sparse_allgather: the sum of a completed round");
  for (const auto& v : got_)
    model::scatter_add(v, dst, scale);
}

std::uint64_t sparse_allgather::received_values() const {
  std::uint64_t sum = 0;
  for (std::uint32_t o = 0; o < n_; ++o)
    sum += o == rank_ ? 0 : got_[o].nnz();
  return sum;
}

} // namespace actors
