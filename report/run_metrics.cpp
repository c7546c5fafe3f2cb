#include "report/run_metrics.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace runtime {

std::vector<double> net_metrics::utilisation() const {
  std::vector<double> out(std::max(tx_busy_seconds.size(), rx_busy_seconds.size()), 0.0);
  for (std::size_t h = 0; h < out.size() && span_seconds > 0; ++h) {
    const double tx = h < tx_busy_seconds.size() ? tx_busy_seconds[h] : 0.0;
    const double rx = h < rx_busy_seconds.size() ? rx_busy_seconds[h] : 0.0;
    out[h] = std::max(tx, rx) / span_seconds;
  }
  return out;
}

double sim_metrics::role_busy::cost_cv() const {
  if (ratio_weight <= 0 || ratio_sum <= 0)
    return 0;
  const double mean = ratio_sum / ratio_weight;
  const double var = std::max(0.0, ratio_sq_sum / ratio_weight - mean * mean);
  return std::sqrt(var) / mean;
}

std::vector<double> sim_metrics::core_utilisation() const {
  std::vector<double> out;
  for (double b : host_busy_seconds)
    out.push_back(virtual_seconds > 0 ? b / (virtual_seconds * double(cores_per_host)) : 0.0);
  return out;
}

std::string to_json(const run_metrics& m) {
  using json = nlohmann::ordered_json; // keys in the order written
  // null for an absent value; nlohmann writes NaN and infinities as null too.
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json j;
  j["mode"] = m.mode;
  j["arch"] = m.arch;
  j["examples"] = m.examples;
  j["seconds"] = m.seconds;
  j["examples_per_second"] = m.examples_per_second();
  j["simulated_examples_per_second"] = opt(m.simulated_examples_per_second());
  j["host_examples_per_second"] = opt(m.host_examples_per_second);
  j["train_ne"] = m.train_ne;
  const auto& e = m.eval;
  j["eval_ne"] = e ? json(e->ne) : json(nullptr);
  j["eval_auc"] = e ? json(e->auc) : json(nullptr);
  if (e && e->grouped) { // data.user: written only then
    j["eval_gauc"] = e->gauc.gauc;
    j["eval_users"] = e->gauc.users;
    j["eval_gauc_users"] = e->gauc.counted;
    j["eval_gauc_examples"] = e->gauc.examples;
  }
  j["eval_logloss"] = e ? json(e->logloss) : json(nullptr);
  j["eval_calibration"] = e ? json(e->calibration) : json(nullptr);
  j["eval_examples"] = e ? json(e->examples) : json(nullptr);
  j["eval_bayes_ne"] = opt(m.eval_bayes_ne);
  j["eval_seconds"] = m.eval_seconds;
  j["malformed_lines"] = m.malformed_lines;
  j["eval_malformed_lines"] = m.eval_malformed_lines;
  j["cut_bags"] = m.cut_bags;
  j["eval_cut_bags"] = m.eval_cut_bags;
  j["trainers"] = m.trainers;
  j["workers_per_trainer"] = m.workers_per_trainer;
  j["batch_size"] = m.batch_size;
  j["flops_per_example"] = m.flops_per_example;
  j["gflops"] = m.gflops();
  j["eval_model"] = m.eval_model;
  j["lookup_wait_fraction"] = m.lookup_wait_fraction;
  j["workers"] = m.workers ? json{{"cpu_seconds", m.workers->cpu_seconds},
                                   {"dense_step_cpu_seconds", m.workers->dense_step_cpu_seconds},
                                   {"thread_moves", m.workers->thread_moves},
                                   {"batches", m.workers->batches},
                                   {"scheduler_threads", m.workers->scheduler_threads > 0
                                                           ? json(m.workers->scheduler_threads)
                                                           : json(nullptr)}}
                          : json(nullptr);
  j["trainer_examples_per_second"] = m.trainer_examples_per_second;
  j["lost_trainers"] = m.lost_trainers;
  j["stopped_by"] = m.stopped_by ? json(*m.stopped_by) : json(nullptr);
  j["faults"] = m.faults;
  j["bytes"] = {{"lookup", m.bytes.lookup}, {"push", m.bytes.push},
                {"dense_sync", m.bytes.dense_sync}};
  j["sync"] = {{"algorithm", m.sync.algorithm},
               {"rounds", m.sync.rounds},
               {"sync_gap_mean", opt(m.sync.sync_gap_mean)},
               {"sync_gap_p50", opt(m.sync.sync_gap_p50)},
               {"sync_gap_p90", opt(m.sync.sync_gap_p90)},
               {"sync_gap_max", opt(m.sync.sync_gap_max)},
               {"worker_blocked_fraction", m.sync.worker_blocked_fraction},
               {"bytes", m.sync.bytes},
               {"bytes_received", m.sync.bytes_received}};
  j["dct"] = nullptr;
  if (m.dct || m.dct_mp)
    j["dct"] = {{"dp", false}, {"mp", nullptr}};
  if (const auto& d = m.dct)
    j["dct"].update({{"dp", true},
                     {"dp_keep", d->dp_keep},
                     {"ring", d->ring ? json(d->ring_reduce ? "reduce" : "gather")
                                      : json(nullptr)},
                     {"refresh", d->refresh},
                     {"error_feedback", d->error_feedback},
                     {"rounds", d->rounds},
                     {"bytes", d->bytes},
                     {"dense_bytes", d->dense_bytes},
                     {"reduction", d->reduction()},
                     {"bytes_per_round", d->bytes_per_round()},
                     {"sent_fraction", d->sent_fraction},
                     {"reply_fraction", d->reply_fraction},
                     {"refreshes", d->refreshes}});
  if (const auto& d = m.dct_mp)
    j["dct"]["mp"] = {{"keep", d->keep},
                      {"backward", d->backward},
                      {"grad_keep", d->grad_keep},
                      {"error_feedback", d->error_feedback},
                      {"refresh", d->refresh},
                      {"lookup_bytes", d->lookup_bytes},
                      {"lookup_dense_bytes", d->lookup_dense_bytes},
                      {"push_bytes", d->push_bytes},
                      {"push_dense_bytes", d->push_dense_bytes},
                      {"bytes", d->bytes()},
                      {"dense_bytes", d->dense_bytes()},
                      {"reduction", d->reduction()},
                      {"bytes_per_example", d->bytes_per_example()},
                      {"row_fraction", d->row_fraction},
                      {"grad_fraction", d->grad_fraction},
                      {"refreshes", d->refreshes}};
  if (const auto& d = m.embedding) { // only with dynamic tables: hashed runs' JSON stays
    std::uint64_t rows = 0;
    for (const auto r : d->rows)
      rows += r;
    j["embedding"] = {{"kind", "dynamic"},
                      {"max_rows", d->max_rows},
                      {"admit_after", d->admit_after},
                      {"ttl", d->ttl},
                      {"rows", rows},
                      {"rows_per_table", d->rows},
                      {"admissions", d->admissions},
                      {"evictions", d->evictions},
                      {"expired", d->expired},
                      {"lookups", d->lookups},
                      {"missing_lookups", d->missing},
                      {"eval_lookups", d->eval_lookups},
                      {"eval_missing_lookups", d->eval_missing},
                      {"bytes", d->bytes}};
  }
  if (const auto& c = m.collisions) // only with embedding.collisions: other runs' JSON stays
    j["embedding"] = {{"kind", "hashed"},
                      {"lookups", c->lookups},
                      {"shared_lookups", c->shared_lookups},
                      {"collision_share", c->lookups ? double(c->shared_lookups) /
                                                         double(c->lookups) : 0.0},
                      {"used_rows", c->used_rows},
                      {"shared_rows", c->shared_rows}};
  j["net"] = nullptr;
  if (m.net)
    j["net"] = {{"latency_us", m.net->latency_us},     {"bandwidth_gbps", m.net->bandwidth_gbps},
                {"dilation", m.net->dilation},         {"bytes", m.net->bytes},
                {"messages", m.net->messages},         {"nic_utilisation", m.net->utilisation()},
                {"tx_busy_seconds", m.net->tx_busy_seconds},
                {"rx_busy_seconds", m.net->rx_busy_seconds}};
  j["checkpoint"] = nullptr;
  if (const auto& c = m.checkpoint)
    j["checkpoint"] = {{"count", c->count},
                       {"cuts", c->cuts},
                       {"shard_saves", c->shard_saves},
                       {"bytes", c->bytes},
                       {"seconds", c->seconds},
                       {"overhead_fraction", c->overhead_fraction},
                       {"max_pause_seconds", c->max_pause_seconds},
                       {"pushes_held", c->pushes_held},
                       {"rows_copied", c->rows_copied}};
  j["sim"] = nullptr;
  if (m.sim)
    j["sim"] = {{"clock", "virtual"},
                {"virtual_seconds", m.sim->virtual_seconds},
                {"simulated_examples_per_second", m.examples_per_second()},
                {"handlers", m.sim->handlers},
                {"busy_core_seconds", m.sim->busy_core_seconds},
                {"cores_per_host", m.sim->cores_per_host},
                {"host_busy_seconds", m.sim->host_busy_seconds},
                {"core_utilisation", m.sim->core_utilisation()}};
  if (m.sim && m.sim->calibrated)
    j["sim"]["constants"] = m.sim->constants;
  if (m.sim) {
    auto& roles = j["sim"]["busy_by_role"] = json::object();
    for (const auto& [name, r] : m.sim->busy_by_role) {
      roles[name] = {{"seconds", r.seconds}, {"handlers", r.handlers}};
      if (m.sim->measured) { // (model runs keep their metrics bytes: the oracle's hashes)
        roles[name]["model_seconds"] = r.model_seconds;
        roles[name]["flops_seconds"] = r.flops_seconds;
        roles[name]["bare_handlers"] = r.bare_handlers;
        roles[name]["bare_seconds"] = r.bare_seconds;
        roles[name]["cost_cv"] = r.cost_cv();
      }
    }
  }
  j["recovery"] = nullptr;
  if (const auto& r = m.recovery) {
    j["recovery"] = {{"mode", r->mode},
                     {"policy", r->policy},
                     {"fraction", r->fraction},
                     {"interval_seconds", r->interval_seconds},
                     {"target_pls", r->target_pls},
                     {"mtbf_seconds", r->mtbf_seconds},
                     {"failures", r->failures},
                     {"events", r->events},
                     {"lost_examples", r->lost_examples},
                     {"pls", r->pls},
                     {"predicted_pls", opt(r->predicted_pls)},
                     {"redone_examples", r->redone_examples},
                     {"outage_seconds", r->outage_seconds}};
    const json saves = {{"saves", r->saves},
                        {"full_saves", r->full_saves},
                        {"rows_saved", r->rows_saved},
                        {"bytes", r->bytes},
                        {"failed_saves", r->failed_saves},
                        {"save_seconds", r->save_seconds},
                        {"loads", r->loads},
                        {"load_bytes", r->load_bytes},
                        {"load_seconds", r->load_seconds},
                        {"tracking_bytes", r->tracking_bytes},
                        {"overhead_fraction", r->overhead_fraction}};
    for (const auto& [k, v] : saves.items()) // multi-node: not gathered (null)
      j["recovery"][k] = r->saves_counted ? v : json(nullptr);
  }
  return j.dump() + "\n";
}

} // namespace runtime
