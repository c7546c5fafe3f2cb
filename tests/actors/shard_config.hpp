#pragma once
// The small embedding shard of the shard tests (shard_test, hogwild_rows_test,
// the shard_dynamic* tests) and the ids and lookups those send it.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "messages/messages.hpp"
#include "model/dynamic_tables.hpp"
#include "model/shard_layout.hpp"

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

// small_shard_config with dynamic tables: an id gets a row at its 2nd sight,
// at most 8 rows a table on this shard, the bound of a whole table 24 rows.
inline actors::embedding_shard_config small_dynamic_shard_config() {
  auto c = small_shard_config();
  c.dynamic = model::dynamic_settings{};
  c.dynamic->admit_after = 2;
  c.dynamic->max_rows = 8;
  c.dynamic->init_rows = 24;
  c.model_seed = 7;
  c.batch_size = 1;
  return c;
}

// The first n ids (from 1) that shard `shard` of 3 owns.
inline std::vector<std::uint64_t> ids_owned(std::uint64_t shard, std::size_t n) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t id = 1; out.size() < n; ++id)
    if (model::id_owner(id, 3) == shard)
      out.push_back(id);
  return out;
}

// Batch `batch`'s lookup of dynamic tables' keys: (table, id) pairs.
inline messages::lookup_request pair_lookup(std::uint64_t batch, std::vector<std::uint64_t> keys) {
  messages::lookup_request r;
  r.batch = batch;
  r.keys.values = std::move(keys);
  return r;
}

// small_dynamic_shard_config whose table 0 holds one row from the start:
// id `id` (the first that shard 1 owns), weights `w` (0.5 each), use count
// 10, last use 3, optimiser state 0.
struct one_row_shard {
  actors::embedding_shard_config cfg;
  std::uint64_t id = 0;
  std::vector<float> w;
};
inline one_row_shard one_row_dynamic_shard() {
  one_row_shard s;
  s.cfg = small_dynamic_shard_config();
  const std::size_t spr = s.cfg.optimizer.state_per_row(s.cfg.dim);
  auto full = std::make_shared<model::dynamic_tables>(s.cfg.num_tables, *s.cfg.dynamic,
                                                      s.cfg.dim, spr, s.cfg.model_seed);
  s.id = ids_owned(1, 1)[0];
  s.w.assign(s.cfg.dim, 0.5f);
  const std::vector<float> state(spr, 0.0f);
  full->table(0).insert_row({s.id, 10, 3}, s.w.data(), state.data());
  s.cfg.initial_dynamic = full;
  return s;
}

} // namespace test
