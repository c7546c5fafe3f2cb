#pragma once
// hogwild_replica: THE one type shared between actors without messages.
//
// A trainer's dense parameters (all MLP weights in one flat float buffer, in
// model::dense_layout order) plus the dense optimiser's accumulators. The
// trainer creates it; its W Hogwild workers and its shadow syncer receive a
// shared_ptr at spawn time and then read and write the floats concurrently,
// WITHOUT locks. This is Hogwild (Niu et al., 2011) by design:
//
// Thread safety, and why it is safe enough:
// - Writers are the workers (optimiser steps, element-wise `w -= step`) and
//   the syncer (elastic or averaging merges, also element-wise). Readers are
//   the workers' forward/backward passes and the syncer's snapshots.
// - A racing read may see a mix of old and new elements (a "torn" snapshot of
//   the whole vector), and two racing read-modify-writes of one element may
//   lose one update. Each element is an aligned 32-bit float, which x86-64
//   and aarch64 load and store atomically, so no element is ever a mix of two
//   values. SGD-type methods tolerate both effects: they are small, bounded,
//   sparse-in-time perturbations (the Hogwild and ShadowSync analyses).
// - The buffer is allocated once at construction and never resized or freed
//   while any actor holds the shared_ptr, so no access is out of bounds.
// - Formally these are data races (undefined behaviour in C++). Every WRITE
//   to the shared floats goes through a member function of this class
//   (apply_dense, subtract, subtract_sparse, merge); the ThreadSanitizer build suppresses
//   reports with `race:actors::hogwild_replica::` (tests/tsan.supp) and so
//   still reports every race that does not involve these writers. Readers
//   (the workers' forward/backward, snapshots) may read params() directly.
// The counters are real atomics: the syncer reads `batches` to measure the
// sync gap, the trainer reads them for progress reports.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/check.hpp"
#include "model/dct_codec.hpp"
#include "model/optimizer.hpp"
#include "model/sync_rules.hpp"

namespace actors {

class hogwild_replica {
public:
  // n floats of parameters (copied from `init`) and n accumulators (zero).
  explicit hogwild_replica(const std::vector<float>& init)
    : size_(init.size()), params_(new float[init.size()]), acc_(new float[init.size()]()) {
    std::copy(init.begin(), init.end(), params_.get());
  }
  // ... with the accumulators from `state` (a resumed checkpoint), or zero
  // when `state` is empty.
  hogwild_replica(const std::vector<float>& init, const std::vector<float>& state)
    : hogwild_replica(init) {
    SS_CHECK(state.empty() || state.size() == size_, "hogwild_replica: optimiser state size");
    std::copy(state.begin(), state.end(), acc_.get());
  }

  std::size_t size() const { return size_; }
  float* params() { return params_.get(); }
  const float* params() const { return params_.get(); }

  std::vector<float> snapshot() const { return {params_.get(), params_.get() + size_}; }
  // The dense optimiser's state (racy like snapshot(); exact once training ended).
  std::vector<float> state_snapshot() const { return {acc_.get(), acc_.get() + size_}; }
  // Copies [offset, offset + n) of the live parameters into dst.
  void copy_out(std::size_t offset, std::size_t n, float* dst) const;

  // -- the lock-free writers (Hogwild) ------------------------------------------
  // One dense optimiser step with the worker's gradient (size() floats).
  void apply_dense(const model::dense_optimizer& opt, const float* grads);
  // EASGD: w[offset + j] -= d[j] for j < n.
  void subtract(std::size_t offset, const float* d, std::size_t n);
  // EASGD through DCT: w[offset + index_k] -= value_k.
  void subtract_sparse(std::size_t offset, const model::sparse_vector& d);
  // MA/BMUF: merge a round's target given the snapshot it started from.
  void merge(model::merge_mode mode, const float* snapshot, const float* target);

  // Progress counters (relaxed atomics; exact totals come from worker_stats).
  std::atomic<std::uint64_t> batches{0};
  std::atomic<std::uint64_t> examples{0};

  // Shadow pacing (sync.min-gap-batches): the syncer asks to be woken once
  // `batches` reaches a count; the worker whose batch reaches it, or the
  // syncer itself when the count was reached before it asked, claims the
  // wake-up, so exactly one side acts on it.
  static constexpr std::uint64_t no_wake = ~std::uint64_t{0};
  void want_wake_at(std::uint64_t count) { wake_at_.store(count, std::memory_order_seq_cst); }
  void cancel_wake() { wake_at_.store(no_wake, std::memory_order_seq_cst); }
  // True for the one caller that finds `batches_now` at or past the count asked for.
  bool claim_wake(std::uint64_t batches_now) {
    auto want = wake_at_.load(std::memory_order_seq_cst);
    return want != no_wake && batches_now >= want &&
           wake_at_.compare_exchange_strong(want, no_wake, std::memory_order_seq_cst);
  }

private:
  std::size_t size_;
  std::atomic<std::uint64_t> wake_at_{no_wake};
  std::unique_ptr<float[]> params_;
  std::unique_ptr<float[]> acc_;
};

using replica_ptr = std::shared_ptr<hogwild_replica>;

} // namespace actors
