#include "runtime/run_metrics.hpp"

#include <cstdarg>

#include <algorithm>
#include <cstdio>

#include "runtime/json_writer.hpp"

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

std::vector<double> sim_metrics::core_utilisation() const {
  std::vector<double> out;
  for (double b : host_busy_seconds)
    out.push_back(virtual_seconds > 0 ? b / (virtual_seconds * double(cores_per_host)) : 0.0);
  return out;
}

std::string to_json(const run_metrics& m) {
  json_writer w;
  w.begin_object();
  w.field("mode", m.mode).field("arch", m.arch);
  w.field("examples", m.examples).field("seconds", m.seconds);
  w.field("examples_per_second", m.examples_per_second());
  auto opt = [&](const char* k, bool has, double v) {
    w.key(k);
    has ? w.value(v) : w.null();
  };
  auto array = [&](const char* k, const std::vector<double>& xs) {
    w.key(k).begin_array();
    for (double x : xs)
      w.value(x);
    w.end_array();
  };
  const auto sim = m.simulated_examples_per_second();
  opt("simulated_examples_per_second", sim.has_value(), sim.value_or(0));
  opt("host_examples_per_second", m.host_examples_per_second.has_value(),
      m.host_examples_per_second.value_or(0));
  w.field("train_ne", m.train_ne);
  const bool e = m.eval.has_value();
  opt("eval_ne", e, e ? m.eval->ne : 0);
  opt("eval_auc", e, e ? m.eval->auc : 0);
  opt("eval_logloss", e, e ? m.eval->logloss : 0);
  opt("eval_calibration", e, e ? m.eval->calibration : 0);
  opt("eval_examples", e, e ? double(m.eval->examples) : 0);
  opt("eval_bayes_ne", m.eval_bayes_ne.has_value(), m.eval_bayes_ne.value_or(0));
  w.field("eval_seconds", m.eval_seconds);
  w.field("malformed_lines", m.malformed_lines);
  w.field("eval_malformed_lines", m.eval_malformed_lines);
  w.field("trainers", std::uint64_t(m.trainers));
  w.field("workers_per_trainer", std::uint64_t(m.workers_per_trainer));
  w.field("flops_per_example", m.flops_per_example).field("gflops", m.gflops());
  w.field("eval_model", m.eval_model);
  w.field("lookup_wait_fraction", m.lookup_wait_fraction);
  w.key("trainer_examples_per_second").begin_array();
  for (double x : m.trainer_examples_per_second)
    w.value(x);
  w.end_array();
  w.key("lost_trainers").begin_array();
  for (const auto& x : m.lost_trainers)
    w.value(x);
  w.end_array();
  w.key("faults").begin_array();
  for (const auto& x : m.faults)
    w.value(x);
  w.end_array();
  w.key("bytes").begin_object();
  w.field("lookup", m.bytes.lookup).field("push", m.bytes.push);
  w.field("dense_sync", m.bytes.dense_sync).end_object();
  auto optional = [&](const char* k, const std::optional<double>& v) {
    opt(k, v.has_value(), v.value_or(0));
  };
  w.key("sync").begin_object();
  w.field("algorithm", m.sync.algorithm).field("rounds", m.sync.rounds);
  optional("sync_gap_mean", m.sync.sync_gap_mean);
  optional("sync_gap_p50", m.sync.sync_gap_p50);
  optional("sync_gap_p90", m.sync.sync_gap_p90);
  optional("sync_gap_max", m.sync.sync_gap_max);
  w.field("worker_blocked_fraction", m.sync.worker_blocked_fraction);
  w.field("bytes", m.sync.bytes);
  w.end_object();
  w.key("net");
  if (m.net) {
    w.begin_object();
    w.field("latency_us", m.net->latency_us).field("bandwidth_gbps", m.net->bandwidth_gbps);
    w.field("dilation", m.net->dilation).field("bytes", m.net->bytes);
    w.field("messages", m.net->messages);
    array("nic_utilisation", m.net->utilisation());
    array("tx_busy_seconds", m.net->tx_busy_seconds);
    array("rx_busy_seconds", m.net->rx_busy_seconds);
    w.end_object();
  } else {
    w.null();
  }
  w.key("checkpoint");
  if (m.checkpoint) {
    const auto& c = *m.checkpoint;
    w.begin_object();
    w.field("count", c.count).field("bytes", c.bytes).field("seconds", c.seconds);
    w.field("max_pause_seconds", c.max_pause_seconds).field("pushes_held", c.pushes_held);
    w.field("rows_copied", c.rows_copied);
    w.end_object();
  } else {
    w.null();
  }
  w.key("sim");
  if (m.sim) {
    w.begin_object();
    w.field("clock", "virtual").field("virtual_seconds", m.sim->virtual_seconds);
    w.field("simulated_examples_per_second", m.examples_per_second());
    w.field("handlers", m.sim->handlers).field("busy_core_seconds", m.sim->busy_core_seconds);
    w.field("cores_per_host", m.sim->cores_per_host);
    array("host_busy_seconds", m.sim->host_busy_seconds);
    array("core_utilisation", m.sim->core_utilisation());
    w.end_object();
  } else {
    w.null();
  }
  w.key("recovery");
  if (m.recovery) {
    const auto& r = *m.recovery;
    w.begin_object();
    w.field("mode", r.mode).field("policy", r.policy).field("fraction", r.fraction);
    w.field("interval_seconds", r.interval_seconds).field("target_pls", r.target_pls);
    w.field("mtbf_seconds", r.mtbf_seconds).field("failures", r.failures);
    w.key("events").begin_array();
    for (const auto& x : r.events)
      w.value(x);
    w.end_array();
    w.field("lost_examples", r.lost_examples).field("pls", r.pls);
    optional("predicted_pls", r.predicted_pls);
    w.field("redone_examples", r.redone_examples).field("outage_seconds", r.outage_seconds);
    w.field("saves", r.saves).field("full_saves", r.full_saves).field("rows_saved", r.rows_saved);
    w.field("bytes", r.bytes).field("failed_saves", r.failed_saves);
    w.field("save_seconds", r.save_seconds).field("loads", r.loads);
    w.field("load_bytes", r.load_bytes).field("load_seconds", r.load_seconds);
    w.field("tracking_bytes", r.tracking_bytes).field("overhead_fraction", r.overhead_fraction);
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
  return w.str() + "\n";
}

namespace {

void appendf(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void appendf(std::string& out, const char* fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    const auto old = out.size();
    out.resize(old + std::size_t(n) + 1);
    std::vsnprintf(out.data() + old, std::size_t(n) + 1, fmt, ap2);
    out.resize(old + std::size_t(n));
  }
  va_end(ap2);
}

} // namespace

std::string summary(const run_metrics& m) {
  std::string out;
  appendf(out,
                        "trained %llu examples in %.2f s: %.0f ex/s (%.1f GFLOP/s), train NE %.4f",
                        static_cast<unsigned long long>(m.examples), m.seconds,
                        m.examples_per_second(), m.gflops(), m.train_ne);
  if (m.eval) {
    appendf(out,
                       "\neval on %llu examples: NE %.4f, AUC %.4f, logloss %.4f, calibration %.3f",
                       static_cast<unsigned long long>(m.eval->examples), m.eval->ne, m.eval->auc,
                       m.eval->logloss, m.eval->calibration);
    if (m.eval_bayes_ne)
      appendf(out, "\nBayes NE of the eval data %.4f (gap %+.4f)",
                         *m.eval_bayes_ne, m.eval->ne - *m.eval_bayes_ne);
  }
  if (m.mode != "sequential") {
    appendf(out,
                       "\n%zu trainers x %zu workers, sync %s: %llu rounds, gap %s batches, "
                       "blocked %.2f%% of worker time, %.1f MB synced",
                       m.trainers, m.workers_per_trainer, m.sync.algorithm.c_str(),
                       static_cast<unsigned long long>(m.sync.rounds),
                       m.sync.sync_gap_mean ? std::to_string(*m.sync.sync_gap_mean).substr(0, 6).c_str() : "-",
                       100 * m.sync.worker_blocked_fraction, double(m.sync.bytes) / 1e6);
  }
  // The busiest of per-host shares: "host 3 at 41.2%".
  auto busiest = [](const std::vector<double>& xs) {
    if (xs.empty())
      return std::string("-");
    const auto i = std::size_t(std::max_element(xs.begin(), xs.end()) - xs.begin());
    char s[64];
    std::snprintf(s, sizeof s, "host %zu at %.1f%%", i, 100 * xs[i]);
    return std::string(s);
  };
  if (m.net && m.sim)
    appendf(out,
                       "\nnetwork model %g us, %g Gbit/s: %.1f MB in %llu messages between "
                       "hosts; busiest NIC %s",
                       m.net->latency_us, m.net->bandwidth_gbps, double(m.net->bytes) / 1e6,
                       static_cast<unsigned long long>(m.net->messages),
                       busiest(m.net->utilisation()).c_str());
  else if (m.net)
    appendf(out,
                       "\nnetwork model %g us, %g Gbit/s, dilation %.2f: %.0f simulated ex/s "
                       "(wall %.0f ex/s x %.2f), %.0f ex/s by per-host virtual time, %.1f MB "
                       "between hosts; busiest NIC %s",
                       m.net->latency_us, m.net->bandwidth_gbps, m.net->dilation,
                       m.simulated_examples_per_second().value_or(0), m.examples_per_second(),
                       m.net->dilation, m.host_examples_per_second.value_or(0),
                       double(m.net->bytes) / 1e6, busiest(m.net->utilisation()).c_str());
  if (m.sim)
    appendf(out,
                       "\nvirtual clock: %.3f virtual s for the whole run, %llu handlers, %.1f "
                       "core-seconds charged (busiest cores: %s); the times above are virtual",
                       m.sim->virtual_seconds,
                       static_cast<unsigned long long>(m.sim->handlers),
                       m.sim->busy_core_seconds, busiest(m.sim->core_utilisation()).c_str());
  for (const auto& x : m.faults)
    appendf(out, "\nfault injected: %s", x.c_str());
  for (const auto& x : m.lost_trainers)
    appendf(out, "\nLOST %s; the job finished without it",
                       x.c_str());
  if (m.malformed_lines + m.eval_malformed_lines > 0)
    appendf(out, "\nmalformed lines skipped: %llu train, %llu eval",
                  static_cast<unsigned long long>(m.malformed_lines),
                  static_cast<unsigned long long>(m.eval_malformed_lines));
  if (m.recovery) {
    const auto& r = *m.recovery;
    if (r.mode == "full")
      appendf(out,
              "\nfull recovery: %llu failure(s), %llu examples redone, %llu cuts, %.1f MB, "
              "%.3f s cutting, %.3f s loading: store share %.3f%%",
              static_cast<unsigned long long>(r.failures),
              static_cast<unsigned long long>(r.redone_examples),
              static_cast<unsigned long long>(r.saves), double(r.bytes) / 1e6, r.save_seconds,
              r.load_seconds, 100 * r.overhead_fraction);
    else
      appendf(out,
              "\npartial recovery (cpr.policy %s): %llu failure(s), %.0f examples lost (PLS "
              "%.5f), %llu saves (%llu full), %.1f MB, %.3f s saving, %.3f s loading: overhead "
              "%.3f%%",
              r.policy.c_str(), static_cast<unsigned long long>(r.failures), r.lost_examples,
              r.pls, static_cast<unsigned long long>(r.saves),
              static_cast<unsigned long long>(r.full_saves), double(r.bytes) / 1e6,
              r.save_seconds, r.load_seconds, 100 * r.overhead_fraction);
    for (const auto& x : r.events)
      appendf(out, "\nRECOVERED %s", x.c_str());
  }
  return out;
}

} // namespace runtime
