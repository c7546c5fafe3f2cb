#pragma once
// model.embedding and the [embedding] options of `train` (DESIGN.md section
// 16; model/dynamic_table.hpp):
//   model.embedding        hashed (hash mod model.rows-per-table) | dynamic
//   embedding.admit-after  occurrences before an id gets a row (dynamic)
//   embedding.max-rows     rows per dynamic table (0: model.rows-per-table)
//   embedding.ttl          examples unseen before a row is evicted (0: never)
//   embedding.collisions   hashed, sequential: count lookups of shared rows
// Every one is left out of the saved configuration while it holds its
// default, so hashed runs save the bytes they saved before these existed.
#include <optional>
#include <string>

#include "model/dynamic_table.hpp"
#include "config/options.hpp"

namespace runtime {

struct embedding_settings {
  bool dynamic = false; // model.embedding=dynamic
  model::dynamic_settings table;
  // embedding.collisions: hashed tables in sequential mode count the
  // lookups of rows that serve more than one id (model/collision_counter.hpp).
  bool collisions = false;
};

void add_embedding_options(option_set& o);

// Reads the options (max-rows 0 becomes rows_per_table). Errors name the
// keys: embedding.* set with model.embedding=hashed; dynamic tables in the
// simulated cluster (sequential = false) with what has none yet: recovery,
// checkpoint cuts, DCT, cluster.local-rows, or fewer max-rows than shards.
// Multi-node runs refuse them (config/deploy_config.cpp).
std::optional<std::string> build_embedding_settings(const option_set& o, bool sequential,
                                                    std::uint64_t rows_per_table,
                                                    embedding_settings& out);

} // namespace runtime
