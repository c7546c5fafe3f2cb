#include "report/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "report/metrics_endpoint.hpp"
#include "report/timeline.hpp"

namespace runtime {

std::string human_count(double x) {
  char buf[32];
  if (x >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2fG", x / 1e9);
  else if (x >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", x / 1e6);
  else if (x >= 1e4)
    std::snprintf(buf, sizeof buf, "%.1fk", x / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", x);
  return buf;
}

progress_reporter::progress_reporter(std::string mode, double interval_seconds, std::string label)
  : interval_(interval_seconds), label_(std::move(label)) {
  enabled_ = mode != "none";
  live_ = mode == "live" || (mode == "auto" && isatty(STDERR_FILENO));
  if (live_)
    interval_ = 0.25;
  start_ = last_ = std::chrono::steady_clock::now();
}

double progress_reporter::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string progress_reporter::format(const progress_sample& s, double elapsed) const {
  char buf[320];
  const double span = s.virtual_seconds ? *s.virtual_seconds : elapsed;
  const double rate = span > 0 ? double(s.examples) / span : 0.0;
  int n = std::snprintf(buf, sizeof buf, "[%s] %s ex | %s ex/s%s", label_.c_str(),
                        human_count(double(s.examples)).c_str(), human_count(rate).c_str(),
                        s.virtual_seconds ? " simulated" : "");
  if (s.virtual_seconds)
    n += std::snprintf(buf + n, sizeof buf - n, " | virtual %.2f s = %.3gx wall",
                       *s.virtual_seconds, elapsed > 0 ? *s.virtual_seconds / elapsed : 0.0);
  if (s.train_ne)
    n += std::snprintf(buf + n, sizeof buf - n, " | train NE %.4f", *s.train_ne);
  if (s.sync_gap)
    n += std::snprintf(buf + n, sizeof buf - n, " | sync gap %.1f", *s.sync_gap);
  if (s.fraction_done > 0 && s.fraction_done < 1) {
    const double eta = elapsed * (1 - s.fraction_done) / s.fraction_done;
    std::snprintf(buf + n, sizeof buf - n, " | %.0f%% | ETA %.0fs", 100 * s.fraction_done, eta);
  }
  return buf;
}

void progress_reporter::update(const progress_sample& s) {
  if (!s.trainers.empty())
    trainers_ = s.trainers;
  if (timeline_)
    timeline_->offer(s);
  if (metrics_)
    metrics_->publish(s);
  if (!enabled_ || (++calls_ & 7) != 0) // read the clock every 8th batch only
    return;
  auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_).count() < interval_)
    return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (live_) {
    std::fprintf(stderr, "\r\033[K%s", format(s, elapsed).c_str());
    std::fflush(stderr);
  } else {
    spdlog::info("{}", format(s, elapsed));
  }
}

void progress_reporter::finish(const progress_sample& final_sample) {
  progress_sample s = final_sample;
  for (const auto& earlier : trainers_) // a lost trainer keeps its last counts
    if (std::none_of(s.trainers.begin(), s.trainers.end(),
                     [&](const auto& t) { return t.trainer == earlier.trainer; }))
      s.trainers.push_back(earlier);
  std::sort(s.trainers.begin(), s.trainers.end(),
            [](const auto& a, const auto& b) { return a.trainer < b.trainer; });
  if (timeline_) {
    if (s.virtual_seconds)
      timeline_->mark_end_at(*s.virtual_seconds, s);
    else
      timeline_->mark_end();
  }
  if (metrics_)
    metrics_->publish(s);
  if (!enabled_)
    return;
  if (live_) {
    std::fprintf(stderr, "\r\033[K%s\n", format(s, elapsed_seconds()).c_str());
    std::fflush(stderr);
  }
}

} // namespace runtime
