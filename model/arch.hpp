#pragma once
// Model architecture: sizes of the DLRM-style network (DESIGN.md section 4).
//
//   dense [num_dense] -> bottom MLP (ReLU on every layer) -> x [dim]
//   categorical c -> embedding table c -> e_c [dim]        (one value per column)
//   interaction: T = [x, e_1..e_T] (T+1 vectors); strictly-lower-triangle dot
//                products, concatenated after x -> [dim + (T+1)T/2]
//   top MLP (ReLU on all but the last layer, last layer linear, width 1) -> logit
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace model {

struct arch {
  std::size_t num_dense = 13;   // dense input features
  std::size_t num_tables = 26;  // categorical columns = embedding tables
  std::size_t dim = 16;         // embedding width = bottom MLP output width
  std::vector<std::size_t> bottom_hidden{64, 32}; // bottom widths before the last (= dim)
  std::vector<std::size_t> top_hidden{64, 32};    // top widths before the last (= 1)
  std::uint64_t rows_per_table = 100000;          // hash buckets per table

  // Number of pairwise interaction features: (T+1)T/2 for T tables.
  std::size_t num_pairs() const { return (num_tables + 1) * num_tables / 2; }
  // Width of the top MLP's input: dim + num_pairs() (367 for 26 tables, dim 16).
  std::size_t top_input() const { return dim + num_pairs(); }
  // Full layer widths, input first: e.g. {13, 64, 32, 16} and {367, 64, 32, 1}.
  std::vector<std::size_t> bottom_sizes() const;
  std::vector<std::size_t> top_sizes() const;
  // "13-64-32-16 / 367-64-32-1, dim 16, 100000 rows"
  std::string describe() const;
};

// Presets: "small" (13-64-32-16, 367-64-32-1) and "dlrm-kaggle"
// (13-512-256-64-16, 367-512-256-1), both dim 16. Returns nullopt for an
// unknown name.
std::optional<arch> preset(const std::string& name);
std::vector<std::string> preset_names();

// The dense learning rate a preset trains stably at (train.dense-lr = -1,
// the default, picks it): small 0.03, dlrm-kaggle 0.005. Adagrad's first
// step moves every weight by about lr; at 0.03 the deeper dlrm-kaggle MLPs
// blow up in their first batches and two Hogwild workers end 6 % above the
// sequential engine's eval NE. 0.005: within 0.4 % at 1 M generated rows,
// and the lowest eval NE of 0.03 / 0.01 / 0.005 / 0.003 on the real Criteo
// rows (docs/RESULTS.md 2b). nullopt for an unknown name.
std::optional<double> preset_dense_lr(const std::string& name);

// Parses "64-32" into {64, 32}; nullopt on malformed input or a zero width.
std::optional<std::vector<std::size_t>> parse_widths(const std::string& text);

} // namespace model
