// summary() of run_metrics.hpp: the run's result as the lines the command
// prints at the end (the JSON form is run_metrics.cpp's to_json).
#include "report/run_metrics.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace runtime {

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
  if (m.stopped_by)
    appendf(out, " (stopped by %s before the end; not evaluated)", m.stopped_by->c_str());
  if (m.eval) {
    appendf(out,
                       "\neval on %llu examples: NE %.4f, AUC %.4f, logloss %.4f, calibration %.3f",
                       static_cast<unsigned long long>(m.eval->examples), m.eval->ne, m.eval->auc,
                       m.eval->logloss, m.eval->calibration);
    if (m.eval->grouped)
      appendf(out, "\nGAUC %.4f over %llu of %llu users (those with both classes; %llu examples)",
              m.eval->gauc.gauc, static_cast<unsigned long long>(m.eval->gauc.counted),
              static_cast<unsigned long long>(m.eval->gauc.users),
              static_cast<unsigned long long>(m.eval->gauc.examples));
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
    appendf(out, "\nsimulated on the virtual clock, constants: %s", m.sim->constants.c_str());
  if (m.sim)
    appendf(out,
                       "\nvirtual clock: %.3f virtual s for the whole run, %llu handlers, %.1f "
                       "core-seconds charged (busiest cores: %s); the times above are virtual",
                       m.sim->virtual_seconds,
                       static_cast<unsigned long long>(m.sim->handlers),
                       m.sim->busy_core_seconds, busiest(m.sim->core_utilisation()).c_str());
  if (const auto& d = m.dct) {
    appendf(out,
            "\nDCT on the dense sync (keep %g, refresh %llu, error feedback %s): %.1f KB per "
            "round %s, %.1fx less than %s (%.2f%% of changes",
            d->dp_keep, static_cast<unsigned long long>(d->refresh),
            d->error_feedback ? "on" : "off", d->bytes_per_round() / 1e3,
            d->ring ? (d->ring_reduce ? "round the ring (reduce)" : "round the ring (gather)")
                    : "both ways",
            d->reduction(),
            d->ring ? "the dense ring" : "dense", 100 * d->sent_fraction);
    if (!d->ring) // EASGD: the dense shard's replies
      appendf(out, ", %.2f%% of d", 100 * d->reply_fraction);
    appendf(out, " sent)");
  }
  if (m.dct_mp)
    appendf(out,
            "\nDCT on the embedding traffic (keep %g, backward %s, gradient keep %g, refresh %llu): "
            "%.1f bytes per example "
            "(rows + pushes), %.1fx less than dense (%.2f%% of row entries, %.2f%% of their "
            "gradients sent)",
            m.dct_mp->keep, m.dct_mp->backward.c_str(), m.dct_mp->grad_keep,
            static_cast<unsigned long long>(m.dct_mp->refresh),
            m.dct_mp->bytes_per_example(), m.dct_mp->reduction(), 100 * m.dct_mp->row_fraction,
            100 * m.dct_mp->grad_fraction);
  for (const auto& x : m.faults)
    appendf(out, "\nfault injected: %s", x.c_str());
  for (const auto& x : m.lost_trainers)
    appendf(out, "\nLOST %s; the job finished without it",
                       x.c_str());
  if (m.malformed_lines + m.eval_malformed_lines > 0)
    appendf(out, "\nmalformed lines skipped: %llu train, %llu eval",
                  static_cast<unsigned long long>(m.malformed_lines),
                  static_cast<unsigned long long>(m.eval_malformed_lines));
  if (m.cut_bags + m.eval_cut_bags > 0)
    appendf(out, "\nbags cut to data.max-ids: %llu train, %llu eval",
                  static_cast<unsigned long long>(m.cut_bags),
                  static_cast<unsigned long long>(m.eval_cut_bags));
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
    else if (!r.saves_counted)
      appendf(out,
              "\npartial recovery (cpr.policy %s): %llu failure(s), %.0f examples lost (PLS "
              "%.5f); the shards' saves are counted on their nodes, not gathered",
              r.policy.c_str(), static_cast<unsigned long long>(r.failures), r.lost_examples,
              r.pls);
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
