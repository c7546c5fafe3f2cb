#include "engine/evaluation.hpp"

#include <chrono>

#include "model/check.hpp"
#include "engine/input.hpp"

namespace runtime {

namespace {

// lookup(rows, batch): the batch's embedding rows into rows.
template <class Lookup>
std::optional<std::string> evaluate_with(const train_config& cfg, const model::dlrm& net,
                                         const float* params, std::size_t num_params,
                                         Lookup lookup, const std::vector<std::string>& files,
                                         run_metrics& out) {
  SS_CHECK(num_params == net.layout().size(), "evaluation: dense parameters of the model");
  std::string err;
  auto r = open_reader(cfg, files, &err);
  if (!r)
    return err;
  const auto t0 = std::chrono::steady_clock::now();
  data::batch b;
  model::batch_lookup rows;
  model::workspace ws;
  model::evaluator ev;
  while (r->next(b, cfg.train.eval_batch_size)) {
    lookup(rows, b);
    net.forward(params, b.dense.data(), rows.input(), b.size, ws);
    if (b.users.empty())
      for (std::size_t e = 0; e < b.size; ++e)
        ev.add(ws.logits[Eigen::Index(e)], b.labels[e]);
    else // data.user: GAUC too
      for (std::size_t e = 0; e < b.size; ++e)
        ev.add(ws.logits[Eigen::Index(e)], b.labels[e], b.users[e]);
    b.clear();
  }
  if (!r->error().empty())
    return r->error();
  log_malformed(*r, "eval");
  if (ev.size() == 0)
    return empty_set_error("eval", files, r->statistics().malformed);
  out.eval = ev.result();
  out.eval_seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.eval_malformed_lines = r->statistics().malformed;
  out.eval_cut_bags = r->statistics().cut_bags;
  return std::nullopt;
}

} // namespace

std::optional<std::string> evaluate_model(const train_config& cfg, const model::dlrm& net,
                                          const float* params, std::size_t num_params,
                                          const model::embedding_tables& tables,
                                          const std::vector<std::string>& files,
                                          run_metrics& out) {
  const auto& a = net.architecture();
  auto lookup = [&](model::batch_lookup& rows, const data::batch& b) {
    rows.lookup(b.cat.data(), b.size, a, tables, b.multi_hot() ? b.cat_offsets.data() : nullptr);
  };
  return evaluate_with(cfg, net, params, num_params, lookup, files, out);
}

std::optional<std::string> evaluate_model(const train_config& cfg, const model::dlrm& net,
                                          const float* params, std::size_t num_params,
                                          const model::dynamic_tables& tables,
                                          const std::vector<std::string>& files,
                                          run_metrics& out) {
  auto& d = out.embedding ? *out.embedding : out.embedding.emplace();
  auto lookup = [&](model::batch_lookup& rows, const data::batch& b) {
    tables.find(rows, b.cat.data(), b.size, b.multi_hot() ? b.cat_offsets.data() : nullptr,
                &d.eval_lookups, &d.eval_missing);
  };
  return evaluate_with(cfg, net, params, num_params, lookup, files, out);
}

} // namespace runtime
