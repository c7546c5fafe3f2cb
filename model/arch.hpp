#pragma once
// Model architecture: sizes of the DLRM-style network (DESIGN.md section 4).
//
//   dense [num_dense] -> bottom MLP (ReLU on every layer) -> x [dim]
//   categorical c -> embedding table c -> e_c [dim]        (one value per column, or
//                    the sum or mean of a multi-hot bag's rows: pooling)
//   interaction: T = [x, e_1..e_T] (T+1 vectors); strictly-lower-triangle dot
//                products, concatenated after x -> [dim + (T+1)T/2]
//   or, with interaction dcn, DCNv2's cross layers over [x, e_1..e_T]
//                -> [(T+1) dim] (cross.hpp)
//   top MLP (ReLU on all but the last layer, last layer linear, width 1) -> logit
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace model {

// How the bottom output and the embeddings meet: DLRM's pairwise dot
// products, or DCNv2's low-rank cross layers.
enum class interaction_kind { dot, dcn };
const char* to_string(interaction_kind k); // "dot" | "dcn"

// How a multi-hot field's rows become its one vector (model/pooling.hpp).
enum class pooling_kind { sum, mean };
const char* to_string(pooling_kind k); // "sum" | "mean"

struct arch {
  std::size_t num_dense = 13;   // dense input features
  std::size_t num_tables = 26;  // categorical columns = embedding tables
  std::size_t dim = 16;         // embedding width = bottom MLP output width
  std::vector<std::size_t> bottom_hidden{64, 32}; // bottom widths before the last (= dim)
  std::vector<std::size_t> top_hidden{64, 32};    // top widths before the last (= 1)
  std::uint64_t rows_per_table = 100000;          // hash buckets per table
  interaction_kind interaction = interaction_kind::dot;
  std::size_t cross_layers = 0; // dcn: cross layers (0: the top MLP reads [x, e_1..e_T])
  std::size_t cross_rank = 0;   // dcn: rank r of each layer's V [r, D] and U [D, r]
  pooling_kind pooling = pooling_kind::sum; // multi-hot fields: sum or mean of a bag's rows

  // Number of pairwise interaction features: (T+1)T/2 for T tables.
  std::size_t num_pairs() const { return (num_tables + 1) * num_tables / 2; }
  // dcn: the width D of x0 = [x, e_1..e_T], (T+1) dim.
  std::size_t cross_width() const { return (num_tables + 1) * dim; }
  // Width of the top MLP's input: dot, dim + num_pairs() (367 for 26 tables,
  // dim 16); dcn, cross_width() (432 for 26 tables, dim 16).
  std::size_t top_input() const {
    return interaction == interaction_kind::dcn ? cross_width() : dim + num_pairs();
  }
  // Full layer widths, input first: e.g. {13, 64, 32, 16} and {367, 64, 32, 1}.
  std::vector<std::size_t> bottom_sizes() const;
  std::vector<std::size_t> top_sizes() const;
  // "13-64-32-16 / 367-64-32-1, dim 16, 100000 rows"
  std::string describe() const;
};

// Presets (dim 16 unless said): "small" (13-64-32-16, 367-64-32-1),
// "dlrm-kaggle" (13-512-256-64-16, 367-512-256-1), "dlrm-dcnv2" (MLPerf's
// DLRM-DCNv2: dim 128, 13-512-256-128, 3 cross layers of rank 512,
// 3456-1024-1024-512-256-1) and "dcnv2-small" (its shape scaled to train on
// two cores in minutes: 13-64-32-16, 3 cross layers of rank 64,
// 432-64-32-1). Returns nullopt for an unknown name.
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
