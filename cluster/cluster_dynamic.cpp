// Dynamic embedding tables (model.embedding=dynamic) of the simulated
// cluster, gathered by the coordinator after training:
//   coordinator -> embedding shard: stats(ids); shard -> coordinator: its counters
//   coordinator -> embedding shard: dump(ids); shard -> coordinator: its rows by (table, id)
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/coordinator.hpp"

namespace runtime {

using namespace actors;

std::optional<std::string> gather_dynamic_tables(caf::blocking_actor* self,
                                                 const train_config& cfg,
                                                 const cluster_handles& c,
                                                 model::dynamic_tables& t) {
  std::optional<std::string> err;
  const std::size_t dim = t.dim(), T = t.num_tables();
  for (std::size_t s = 0; s < c.shards.size() && !err; ++s)
    self->request(c.shards[s], cfg.cluster.timeout, dump_atom::value, ids_atom::value)
      .receive(
        [&](embedding_grads& g) {
          const auto& k = g.keys.values;
          if (k.size() % 2 != 0 || g.grads.size() != k.size() / 2 * dim) {
            err = c.shard_names[s] + " dumped " + std::to_string(k.size()) + " key words and " +
                  std::to_string(g.grads.size()) + " floats";
            return;
          }
          for (std::size_t i = 0; i < k.size() / 2 && !err; ++i) {
            auto& tab = t.table(std::size_t(std::min<std::uint64_t>(k[2 * i], T - 1)));
            if (k[2 * i] >= T || tab.find(k[2 * i + 1]) != model::dynamic_table::no_row ||
                tab.rows() >= t.settings().max_rows)
              err = c.shard_names[s] + " dumped table " + std::to_string(k[2 * i]) + " id " +
                    std::to_string(k[2 * i + 1]) + ": out of range, twice, or beyond max-rows";
            else
              tab.insert_row({k[2 * i + 1], 0, 0}, g.grads.data() + i * dim, nullptr);
          }
        },
        [&](caf::error& x) {
          err = c.shard_names[s] + ": dump failed: " + self->system().render(x);
        });
  return err;
}

std::optional<std::string> gather_dynamic_metrics(caf::blocking_actor* self,
                                                  const train_config& cfg,
                                                  const cluster_handles& c, run_metrics& out) {
  std::optional<std::string> err;
  auto& d = out.embedding ? *out.embedding : out.embedding.emplace();
  const auto& st = cfg.embedding.table;
  const std::size_t T = cfg.arch.num_tables;
  d.max_rows = st.max_rows;
  d.admit_after = st.admit_after;
  d.ttl = st.ttl;
  d.rows.assign(T, 0);
  for (std::size_t s = 0; s < c.shards.size() && !err; ++s)
    self->request(c.shards[s], cfg.cluster.timeout, stats_atom::value, ids_atom::value)
      .receive(
        [&](key_blob& k) {
          if (k.size() != T + 6) {
            err = c.shard_names[s] + " sent " + std::to_string(k.size()) + " counters, expected " +
                  std::to_string(T + 6);
            return;
          }
          for (std::size_t t = 0; t < T; ++t)
            d.rows[t] += k.values[t];
          const std::uint64_t* x = k.data() + T;
          d.admissions += x[0];
          d.evictions += x[1];
          d.expired += x[2];
          d.lookups += x[3];
          d.missing += x[4];
          d.bytes += x[5];
        },
        [&](caf::error& x) {
          err = c.shard_names[s] + ": stats failed: " + self->system().render(x);
        });
  if (err)
    return err;
  std::uint64_t rows = 0;
  for (const auto r : d.rows)
    rows += r;
  spdlog::info("dynamic embeddings over {} shards: {} rows in {} tables (at most {} each), {} "
               "admitted, {} evicted; {} of {} training lookups were of ids without a row",
               c.shards.size(), rows, T, d.max_rows, d.admissions, d.evictions, d.missing,
               d.lookups);
  return std::nullopt;
}

} // namespace runtime
