#include "config/embedding_config.hpp"

namespace runtime {

namespace {

void quiet(option_set& o, option_spec spec) {
  spec.omit_default_from_ini = true; // added after checkpoints existed: their bytes stay
  o.add(std::move(spec));
}

} // namespace

void add_embedding_options(option_set& o) {
  using t = opt_type;
  quiet(o, {"model.embedding", t::string, "hashed",
            "embedding tables: hashed (a value's hash mod model.rows-per-table picks its row; "
            "ids may share rows) or dynamic (a row per id, admitted after embedding.admit-after "
            "occurrences, at most embedding.max-rows per table, least used rows evicted; an id "
            "without a row reads zeros; sequential, simulated and multi-node runs)",
            {"hashed", "dynamic"}});
  quiet(o, {"embedding.admit-after", t::integer, "1",
            "model.embedding=dynamic: an id gets a row at its n-th occurrence in training, "
            "counted in a count-min sketch (1: at first sight)",
            {}, 1, 65535});
  quiet(o, {"embedding.max-rows", t::integer, "0",
            "model.embedding=dynamic: most rows per table; a full table evicts its least used "
            "rows (use counts halved at each eviction) to admit an id (0 = model.rows-per-table)",
            {}, 0, 4e9});
  quiet(o, {"embedding.ttl", t::integer, "0",
            "model.embedding=dynamic: rows unseen for more than this many training examples "
            "are evicted, in sweeps every ttl/8 examples (0 = never)",
            {}, 0, 1e18});
  quiet(o, {"embedding.collisions", t::boolean, "false",
            "model.embedding=hashed, cluster.mode=sequential: count the lookups whose row also "
            "serves another id of the run (8 bytes a row; the metrics JSON's embedding object)",
            {}});
}

std::optional<std::string> build_embedding_settings(const option_set& o, bool sequential,
                                                    std::uint64_t rows_per_table,
                                                    embedding_settings& out) {
  out.dynamic = o.get_string("model.embedding") == "dynamic";
  out.table.admit_after = std::uint64_t(o.get_int("embedding.admit-after"));
  out.table.max_rows = std::uint64_t(o.get_int("embedding.max-rows"));
  if (out.table.max_rows == 0)
    out.table.max_rows = rows_per_table;
  out.table.ttl = std::uint64_t(o.get_int("embedding.ttl"));
  out.collisions = o.get_bool("embedding.collisions");
  if (out.collisions && (out.dynamic || !sequential))
    return "option 'embedding.collisions' = true (" + o.source("embedding.collisions") +
           ") counts rows shared by ids of hashed tables in cluster.mode=sequential: it needs "
           "model.embedding=hashed (here " + o.get_string("model.embedding") +
           ") and cluster.mode=sequential (here " + o.get_string("cluster.mode") + ")";
  if (!out.dynamic) {
    for (const char* k : {"embedding.admit-after", "embedding.max-rows", "embedding.ttl"})
      if (o.is_set(k))
        return std::string("option '") + k + "' (" + o.source(k) +
               ") applies to dynamic tables: it needs model.embedding=dynamic, not hashed";
    return std::nullopt;
  }
  if (out.table.max_rows >= 0xFFFFFFFFull)
    return "option 'embedding.max-rows' = " + std::to_string(out.table.max_rows) +
           ": a dynamic table holds fewer than 4294967295 rows";
  if (sequential)
    return std::nullopt;
  // The simulated cluster and multi-node runs: each embedding shard holds the
  // tables of its ids (actors/embedding_shard.hpp), with max-rows / shards
  // rows each.
  const std::string mine = "option 'model.embedding' = dynamic (" + o.source("model.embedding") + ")";
  auto refuse = [&](const char* key, const std::string& why) {
    return mine + " with option '" + key + "' = " + o.value_text(key) + " (" + o.source(key) +
           "): " + why + " (dynamic tables run in cluster.mode=sequential, simulated and "
           "multi-node)";
  };
  const auto shards = std::uint64_t(o.get_int("cluster.embedding-shards"));
  if (out.table.max_rows < shards)
    return refuse("cluster.embedding-shards",
                  "each shard holds embedding.max-rows / shards rows of a table, and "
                  "embedding.max-rows = " + std::to_string(out.table.max_rows) + " is fewer");
  // Partial recovery: each shard's CPR saves hold its ids with their rows
  // (checkpoint/cpr_dynamic.hpp). Checkpoint cuts: each shard writes its
  // dynamic-S.bin when the cut aligns (actors/embedding_shard_cut.cpp), and
  // full recovery rolls back to them.
  if (o.get_bool("cluster.local-rows"))
    return refuse("cluster.local-rows", "the workers reach dynamic tables by messages only");
  return std::nullopt;
}

} // namespace runtime
