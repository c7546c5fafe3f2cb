#pragma once
// The small embedding shard of the shard tests (shard_test, hogwild_rows_test).
#include "actors/embedding_shard.hpp"

namespace test {

// Shard 1 of 3 over 2 tables of 10 rows: it owns rows 1, 4, 7 (local 0, 1, 2)
// and has ceil(10 / 3) = 4 local rows per table (local row 3 is padding).
inline actors::embedding_shard_config small_shard_config() {
  actors::embedding_shard_config c;
  c.shard = 1;
  c.num_shards = 3;
  c.num_tables = 2;
  c.rows_per_table = 10;
  c.dim = 4;
  c.optimizer = {model::sparse_optimizer_kind::rowwise_adagrad, 0.1f, 1e-8f};
  c.seed = 42;
  return c;
}

} // namespace test
