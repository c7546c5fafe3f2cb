#pragma once
// Held-out evaluation of a trained model: reads the eval files with the run's
// schema, scores every example and computes NE, exact AUC, logloss and
// calibration, and exact GAUC when the schema names a user column
// (data.user). Shared by the sequential engine and the actor cluster (which
// first gathers the embedding rows from its shards).
#include <optional>
#include <string>
#include <vector>

#include "model/dlrm.hpp"
#include "model/dynamic_tables.hpp"
#include "model/embedding.hpp"
#include "report/run_metrics.hpp"
#include "config/train_config.hpp"

namespace runtime {

// Fills out.eval, out.eval_seconds and out.eval_malformed_lines. Returns an
// error message on a fatal input error or when the eval files hold no valid
// example. Precondition (SS_CHECK): num_params == net.layout().size(); the
// coordinator checks replicas from the wire before they get here.
std::optional<std::string> evaluate_model(const train_config& cfg, const model::dlrm& net,
                                          const float* params, std::size_t num_params,
                                          const model::embedding_tables& tables,
                                          const std::vector<std::string>& files,
                                          run_metrics& out);

// The same with dynamic tables (model.embedding=dynamic): an id without a
// row reads zeros; adds the lookups and those of ids without a row to
// out.embedding (eval_lookups, eval_missing), which it creates if absent.
std::optional<std::string> evaluate_model(const train_config& cfg, const model::dlrm& net,
                                          const float* params, std::size_t num_params,
                                          const model::dynamic_tables& tables,
                                          const std::vector<std::string>& files,
                                          run_metrics& out);

} // namespace runtime
