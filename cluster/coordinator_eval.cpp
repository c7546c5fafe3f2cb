// Evaluation of a cluster's trained state (coordinator step 4):
//   coordinator -> embedding shard: dump (dynamic tables: dump(ids),
//                  cluster_dynamic.cpp); -> dense shard: dump (centre)
#include <caf/all.hpp>

#include "cluster/cluster_metrics.hpp"
#include "sim/virtual_time.hpp"
#include "cluster/coordinator.hpp"
#include "engine/evaluation.hpp"
#include "model/shard_layout.hpp"

namespace runtime {

using namespace actors;

std::optional<std::string> gather_centre(caf::blocking_actor* self, const train_config& cfg,
                                         const cluster_handles& c, std::vector<float>& params) {
  for (std::size_t d = 0; d < c.dense.size(); ++d) {
    std::optional<std::string> err;
    self->request(c.dense[d], cfg.cluster.timeout, dump_atom::value)
      .receive(
        [&](dense_range& r) {
          if (r.offset + r.values.size() > params.size())
            err = c.dense_names[d] + " dumped a range beyond the parameters";
          else
            std::copy(r.values.values.begin(), r.values.values.end(),
                      params.begin() + std::ptrdiff_t(r.offset));
        },
        [&](caf::error& x) {
          err = c.dense_names[d] + ": dump failed: " + self->system().render(x);
        });
    if (err)
      return err;
  }
  return std::nullopt;
}

std::optional<std::string> evaluate_cluster(caf::blocking_actor* self, const train_config& cfg,
                                            const model::dlrm& net, const cluster_handles& c,
                                            const coordination_result& res, run_metrics& out) {
  std::optional<std::string> err;
  const auto t0 = self->clock().now();
  const auto& a = cfg.arch;
  const bool dynamic = cfg.embedding.dynamic;
  model::embedding_tables tables(a.num_tables, dynamic ? 1 : a.rows_per_table, a.dim, 0);
  std::optional<model::dynamic_tables> dyn;
  if (dynamic) {
    dyn.emplace(a.num_tables, cfg.embedding.table, a.dim, 0, cfg.train.seed + 1);
    err = gather_dynamic_tables(self, cfg, c, *dyn);
  }
  const std::size_t e = c.shards.size();
  const std::uint64_t local_rows = model::local_rows(a.rows_per_table, e);
  for (std::size_t s = 0; s < e && !err && !dynamic; ++s)
    self->request(c.shards[s], cfg.cluster.timeout, dump_atom::value)
      .receive(
        [&](float_blob& blob) {
          if (blob.size() != a.num_tables * local_rows * a.dim) {
            err = c.shard_names[s] + " dumped " + std::to_string(blob.size()) +
                  " floats, expected " + std::to_string(a.num_tables * local_rows * a.dim);
            return;
          }
          for (std::size_t t = 0; t < a.num_tables; ++t)
            for (std::uint64_t l = 0; l < local_rows; ++l) {
              const std::uint64_t row = model::global_row(l, s, e);
              if (row >= a.rows_per_table)
                continue;
              const float* src = blob.data() + (t * local_rows + l) * a.dim;
              std::copy(src, src + a.dim, tables.row(model::row_key(t, row)));
            }
        },
        [&](caf::error& x) {
          err = c.shard_names[s] + ": dump failed: " + self->system().render(x);
        });
  if (err)
    return err;
  eval_model which = cfg.sync.eval_model;
  if (which == eval_model::automatic)
    which = cfg.sync.algorithm == model::sync_algorithm::none ? eval_model::trainer0
                                                               : eval_model::average;
  // trainer0: the first surviving trainer (trainer 0 unless it was lost).
  std::vector<float> params = which == eval_model::trainer0 ? res.reports.front().replica.values
                                                            : average_replicas(res.reports);
  if (which == eval_model::centre)
    err = gather_centre(self, cfg, c, params);
  if (err)
    return err;
  out.eval_model = to_string(which);
  auto failure =
    dyn ? evaluate_model(cfg, net, params.data(), params.size(), *dyn, cfg.data.eval, out)
        : evaluate_model(cfg, net, params.data(), params.size(), tables, cfg.data.eval, out);
  // Virtual clock: the gathering's virtual time (the forward passes run in
  // the coordinator, outside the simulated hosts), so runs repeat exactly.
  if (virtual_clock(self->system()))
    out.eval_seconds = std::chrono::duration<double>(self->clock().now() - t0).count();
  return failure;
}

} // namespace runtime
