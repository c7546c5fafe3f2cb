#include "model/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace model {

double bce_with_logit(double z, double y) {
  // log(1 + e^z) computed without overflow: max(z, 0) + log1p(e^-|z|).
  return std::max(z, 0.0) - y * z + std::log1p(std::exp(-std::abs(z)));
}

double binary_entropy(double p) {
  if (p <= 0.0 || p >= 1.0)
    return 0.0;
  return -(p * std::log(p) + (1.0 - p) * std::log(1.0 - p));
}

double ne_accumulator::ne() const {
  const double h = binary_entropy(base_rate());
  if (count == 0 || h <= 0.0)
    return std::numeric_limits<double>::quiet_NaN();
  return logloss() / h;
}

double ne_accumulator::calibration() const {
  if (positives == 0)
    return std::numeric_limits<double>::quiet_NaN();
  return (pred_sum / double(count)) / base_rate();
}

double auc_exact(const std::vector<float>& predictions, const std::vector<float>& labels) {
  const std::size_t n = predictions.size();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return predictions[a] < predictions[b]; });
  double pos = 0, rank_sum = 0; // sum of (1-based, tie-averaged) ranks of positives
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i;
    while (j + 1 < n && predictions[order[j + 1]] == predictions[order[i]])
      ++j;
    const double avg_rank = 0.5 * double(i + 1 + j + 1);
    for (std::size_t k = i; k <= j; ++k)
      if (labels[order[k]] > 0.5f) {
        rank_sum += avg_rank;
        pos += 1;
      }
    i = j + 1;
  }
  const double neg = double(n) - pos;
  if (pos == 0 || neg == 0)
    return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - pos * (pos + 1) / 2.0) / (pos * neg);
}

void evaluator::add(float logit, float label) {
  const double p = sigmoid(logit);
  acc_.add(bce_with_logit(logit, label), p, label);
  // Rank by logit: monotone in p and free of saturation ties at p = 1.
  preds_.push_back(logit);
  labels_.push_back(label);
}

void evaluator::merge(const evaluator& other) {
  acc_.merge(other.acc_);
  preds_.insert(preds_.end(), other.preds_.begin(), other.preds_.end());
  labels_.insert(labels_.end(), other.labels_.begin(), other.labels_.end());
}

eval_result evaluator::result() const {
  eval_result r;
  r.examples = acc_.count;
  r.ne = acc_.ne();
  r.logloss = acc_.logloss();
  r.calibration = acc_.calibration();
  r.base_rate = acc_.base_rate();
  r.auc = auc_exact(preds_, labels_);
  return r;
}

} // namespace model
