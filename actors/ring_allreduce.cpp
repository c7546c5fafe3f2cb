#include "actors/ring_allreduce.hpp"
#include "model/check.hpp"

#include <algorithm>

namespace actors {

ring_allreduce::ring_allreduce(std::uint32_t rank, std::uint32_t n, send_fn send,
                               std::uint32_t generation)
  : rank_(rank), n_(n), send_(std::move(send)), generation_(generation),
    stash_(max_early_chunks(n)) {
  SS_CHECK(n >= 1 && rank < n, "ring_allreduce: rank within the ring");
}

std::uint32_t ring_allreduce::send_chunk_index(std::uint32_t step) const {
  // reduce-scatter: rank - s; all-gather (t = s - (N-1)): rank + 1 - t.
  // Written as (rank + k N - s') mod N to stay in unsigned arithmetic.
  if (step < n_ - 1)
    return (rank_ + n_ - step) % n_;
  const std::uint32_t t = step - (n_ - 1);
  return (rank_ + 1 + n_ - t) % n_;
}

std::uint32_t ring_allreduce::recv_chunk_index(std::uint32_t step) const {
  // What the previous member sends at the same step.
  return (send_chunk_index(step) + n_ - 1) % n_;
}

std::string ring_allreduce::begin(std::uint64_t round, float* data, std::size_t size) {
  SS_CHECK(!active() && round > round_, "ring_allreduce: a new round starts after the last one ended");
  round_ = round;
  step_ = 0;
  data_ = data;
  done_ = n_ == 1;
  if (done_)
    return {};
  chunks_ = model::split_range(size, n_);
  send_step();
  // A faster neighbour may already have sent chunks of this round.
  return drain();
}

void ring_allreduce::send_step() {
  const auto idx = send_chunk_index(step_);
  const auto& r = chunks_[idx];
  messages::ring_chunk out;
  out.generation = generation_;
  out.round = round_;
  out.step = step_;
  out.chunk = idx;
  out.values.values.assign(data_ + r.offset, data_ + r.offset + r.size);
  bytes_sent_ += out.values.bytes();
  send_(std::move(out));
}

std::string ring_allreduce::receive(messages::ring_chunk&& chunk) {
  if (chunk.step >= steps())
    return "ring chunk with step " + std::to_string(chunk.step) + " of " +
           std::to_string(steps());
  const bool current = chunk.round == round_ && active();
  if (chunk.round < round_ || (chunk.round == round_ && !current) ||
      (current && chunk.step < step_))
    return "stale ring chunk: round " + std::to_string(chunk.round) + " step " +
           std::to_string(chunk.step) + ", expected round " + std::to_string(round_) +
           " step " + std::to_string(step_);
  if (!current || chunk.step > step_)
    return stash_.keep(chunk.round, chunk.step, std::move(chunk),
                       "ring chunk: round " + std::to_string(chunk.round) + " step " +
                         std::to_string(chunk.step));
  if (auto err = apply(std::move(chunk)); !err.empty())
    return err;
  return drain();
}

std::string ring_allreduce::apply(messages::ring_chunk&& chunk) {
  const auto idx = recv_chunk_index(step_);
  const auto& r = chunks_[idx];
  if (chunk.chunk != idx || chunk.values.size() != r.size)
    return "ring chunk " + std::to_string(chunk.chunk) + " with " +
           std::to_string(chunk.values.size()) + " values at step " + std::to_string(step_) +
           ", expected chunk " + std::to_string(idx) + " with " + std::to_string(r.size);
  const float* in = chunk.values.data();
  float* dst = data_ + r.offset;
  if (step_ < n_ - 1) {
    for (std::size_t i = 0; i < r.size; ++i)
      dst[i] += in[i];
  } else {
    std::copy(in, in + r.size, dst);
  }
  if (++step_ == steps())
    done_ = true;
  else
    send_step();
  return {};
}

std::string ring_allreduce::drain() {
  return stash_.drain(
    round_, [this] { return active(); }, [this] { return step_; },
    [this](messages::ring_chunk&& c) { return apply(std::move(c)); });
}

} // namespace actors
