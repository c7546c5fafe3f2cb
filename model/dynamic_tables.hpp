#pragma once
// All dynamic tables of one model in one process (model/dynamic_table.hpp),
// and the batch lookup over them that the sequential engine and evaluation
// use in place of embedding_tables' (model/embedding.hpp).
//
// A batch's keys are row_key(table, slot) for ids with a row and
// row_key(table, missing_slot) for ids without one, so sparse_index
// de-duplicates them as it does hashed keys. gather() writes zeros for a
// missing key; apply() skips it (no row, no update).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/arch.hpp"
#include "model/dynamic_table.hpp"
#include "model/embedding.hpp"
#include "model/optimizer.hpp"

namespace model {

constexpr std::uint64_t missing_slot = dynamic_table::no_row;

class dynamic_tables {
public:
  dynamic_tables(std::size_t num_tables, const dynamic_settings& s, std::size_t dim,
                 std::size_t state_per_row, std::uint64_t seed);

  // Training lookup of a batch: hashes [examples * num_tables] example-major
  // (data::batch::cat) or, with bag_offsets, every bag's ids. Admits and
  // touches rows at `now` (examples trained before this batch; also runs
  // each table's expire(now) first), fills b.keys, b.index and b.unique_rows.
  void train_lookup(batch_lookup& b, const std::uint64_t* hashes, std::size_t examples,
                    std::uint64_t now, const std::uint32_t* bag_offsets = nullptr);
  // Evaluation: the same without side effects; adds the lookups of ids
  // without a row to *missing and all lookups to *lookups.
  void find(batch_lookup& b, const std::uint64_t* hashes, std::size_t examples,
            const std::uint32_t* bag_offsets, std::uint64_t* lookups,
            std::uint64_t* missing) const;
  // Applies opt to every unique row with its reduced gradient (not to missing keys).
  void apply(const sparse_index& idx, const float* grad_unique, const sparse_optimizer& opt);

  std::size_t num_tables() const { return tables_.size(); }
  dynamic_table& table(std::size_t t) { return tables_[t]; }
  const dynamic_table& table(std::size_t t) const { return tables_[t]; }
  std::size_t dim() const { return dim_; }
  std::size_t state_per_row() const { return state_; }
  const dynamic_settings& settings() const { return s_; }
  std::size_t bytes() const;
  dynamic_stats totals() const; // summed over tables

private:
  template <class Slot>
  void keys_of(batch_lookup& b, const std::uint64_t* hashes, std::size_t examples,
               const std::uint32_t* bag_offsets, Slot slot) const;
  void gather(batch_lookup& b) const;
  dynamic_settings s_;
  std::size_t dim_, state_;
  std::vector<dynamic_table> tables_;
};

} // namespace model
