#pragma once
// Embedding rows, batch de-duplication and the local embedding tables used by
// the sequential engine (the actor cluster shards the same rows over
// embedding-shard actors, using the same keys).
//
// Row keys (row_key, key_table, key_row) and their layout over shards
// (shard_local_key) are in model/shard_layout.hpp; row = hash mod
// rows_per_table.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/arch.hpp"
#include "model/dense_layout.hpp"
#include "model/interaction.hpp"
#include "model/optimizer.hpp"
#include "model/shard_layout.hpp"

namespace model {

// h % d for every 64-bit h and divisor d > 0, by multiplications instead of
// a division (Lemire, Kaser and Kurz, "Faster remainder by direct
// computation", 2019): with M = ceil(2^128 / d), h % d is the high 64 bits
// of (M * h mod 2^128) * d. Exact, the same value as the % operator.
class remainder_by {
public:
  explicit remainder_by(std::uint64_t d) : m_(~static_cast<u128>(0) / d + 1), d_(d) {}
  std::uint64_t operator()(std::uint64_t h) const {
    const u128 low = m_ * h; // the fraction h / d, 128 bits of it
    const u128 lo = static_cast<u128>(static_cast<std::uint64_t>(low)) * d_;
    const u128 hi = static_cast<u128>(static_cast<std::uint64_t>(low >> 64)) * d_;
    return static_cast<std::uint64_t>((hi + (lo >> 64)) >> 64);
  }

private:
  using u128 = unsigned __int128;
  u128 m_;
  std::uint64_t d_;
};

// keys[i] = row_key(i % num_tables, hashes[i] % rows_per_table) for n_ids ids
// laid out example-major (as data::batch::cat).
void make_keys(const std::uint64_t* hashes, std::size_t n_ids, std::size_t num_tables,
               std::uint64_t rows_per_table, std::uint64_t* keys);

// The same for a multi-hot batch (data::batch::cat_offsets): field f =
// e*num_tables + t holds the ids hashes[offsets[f] .. offsets[f+1]), all of
// table t; keys gets offsets[fields] entries.
void make_bag_keys(const std::uint64_t* hashes, const std::uint32_t* offsets, std::size_t fields,
                   std::size_t num_tables, std::uint64_t rows_per_table, std::uint64_t* keys);

// De-duplicates the keys of a batch: unique() lists each key once (in order of
// first appearance), inverse()[i] is the position of keys[i] in unique().
// Reusable: build() keeps its buffers, so steady state does not allocate.
class sparse_index {
public:
  void build(const std::uint64_t* keys, std::size_t n);
  const std::vector<std::uint64_t>& unique() const { return unique_; }
  const std::vector<std::uint32_t>& inverse() const { return inverse_; }

private:
  std::vector<std::uint64_t> unique_;
  std::vector<std::uint32_t> inverse_;
  std::vector<std::uint32_t> slots_; // open addressing: 1 + position, 0 = empty
};

class embedding_tables;

// The rows of one batch from local tables: keys, de-duplication and the
// gathered unique rows, with buffers reused across batches. Used by the
// sequential engine and by evaluation (the actors get rows from shards).
struct batch_lookup {
  std::vector<std::uint64_t> keys;
  sparse_index index;
  float_buffer unique_rows; // [unique keys * dim]
  const std::uint32_t* offsets = nullptr; // multi-hot: the batch's cat_offsets

  // hashes: [examples * num_tables] example-major (data::batch::cat); with
  // bag_offsets (a multi-hot batch's cat_offsets, [examples * num_tables + 1],
  // kept by pointer until the next lookup) the ids of every bag.
  void lookup(const std::uint64_t* hashes, std::size_t examples, const arch& a,
              const embedding_tables& t, const std::uint32_t* bag_offsets = nullptr);
  // The rows as the model reads them (interaction.hpp).
  embedding_input input() const {
    return {unique_rows.data(), index.inverse().data(), index.unique().size(), offsets};
  }
};

// All tables of one model in one process: weights [rows, dim] per table and
// `state_per_row` optimiser accumulators per row (sparse_optimizer::state_per_row).
class embedding_tables {
public:
  embedding_tables(std::size_t num_tables, std::uint64_t rows_per_table, std::size_t dim,
                   std::size_t state_per_row = 1);

  // Uniform(-bound, bound) weights and zero accumulators. bound <= 0 means
  // sqrt(1/rows_per_table), as in the public DLRM code; a sharded table passes
  // the bound of the full table (its rows_per_table is only its local rows).
  void init(std::uint64_t seed, float bound = 0.0f);

  float* row(std::uint64_t key) { return weights_.data() + index(key) * dim_; }
  // The row's accumulators (nullptr-safe to pass on when state_per_row is 0).
  const float* row(std::uint64_t key) const { return weights_.data() + index(key) * dim_; }
  float* accumulator(std::uint64_t key) { return accum_.data() + index(key) * state_; }
  const float* accumulator(std::uint64_t key) const {
    return accum_.data() + index(key) * state_;
  }

  // unique_rows[:, u] = row(unique[u])
  void gather(const sparse_index& idx, float* unique_rows) const;
  // Applies opt to every unique row with its reduced gradient.
  void apply(const sparse_index& idx, const float* grad_unique, const sparse_optimizer& opt);

  // The same for the tables of one embedding shard of `num_shards`, by the
  // global row keys it owns (shard_local_key): n entries, entry i at
  // j = at[i] (or i when `at` is null) with the key keys[j]. gather copies
  // its row to out + j * dim; apply steps it with grads + j * dim.
  void gather(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
              std::uint32_t num_shards, float* out) const;
  void apply(const std::uint64_t* keys, const std::uint32_t* at, std::size_t n,
             std::uint32_t num_shards, const float* grads, const sparse_optimizer& opt);

  std::size_t dim() const { return dim_; }
  std::size_t state_per_row() const { return state_; }
  std::size_t num_tables() const { return num_tables_; }
  std::uint64_t rows_per_table() const { return rows_; }
  // All weights, [num_tables * rows, dim] row-major (row = table * rows + r),
  // and the optimiser state, [num_tables * rows, state_per_row]; for
  // diagnostics (bench/trace_engine.cpp).
  std::vector<float>& weights() { return weights_; }
  const std::vector<float>& weights() const { return weights_; }
  const std::vector<float>& accumulators() const { return accum_; }
  std::vector<float>& accumulators() { return accum_; }
  std::size_t bytes() const { return (weights_.size() + accum_.size()) * sizeof(float); }

private:
  std::size_t index(std::uint64_t key) const {
    return key_table(key) * rows_ + key_row(key);
  }
  std::size_t num_tables_;
  std::uint64_t rows_;
  std::size_t dim_;
  std::size_t state_;
  std::vector<float> weights_;
  std::vector<float> accum_;
};

} // namespace model
