#include "model/metrics.hpp"
#include "model/check.hpp"

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

namespace {

// AUC of the examples order[begin, end), sorted by prediction: the
// Mann-Whitney U with average ranks for tied predictions. NaN when one class
// is absent.
double auc_sorted(const std::vector<float>& predictions, const std::vector<float>& labels,
                  const std::vector<std::uint32_t>& order, std::size_t begin, std::size_t end) {
  double pos = 0, rank_sum = 0; // sum of (1-based, tie-averaged) ranks of positives
  std::size_t i = begin;
  while (i < end) {
    std::size_t j = i;
    while (j + 1 < end && predictions[order[j + 1]] == predictions[order[i]])
      ++j;
    const double avg_rank = 0.5 * double(i - begin + 1 + j - begin + 1);
    for (std::size_t k = i; k <= j; ++k)
      if (labels[order[k]] > 0.5f) {
        rank_sum += avg_rank;
        pos += 1;
      }
    i = j + 1;
  }
  const double neg = double(end - begin) - pos;
  if (pos == 0 || neg == 0)
    return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - pos * (pos + 1) / 2.0) / (pos * neg);
}

std::vector<std::uint32_t> identity(std::size_t n) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  return order;
}

} // namespace

double auc_exact(const std::vector<float>& predictions, const std::vector<float>& labels) {
  auto order = identity(predictions.size());
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return predictions[a] < predictions[b]; });
  return auc_sorted(predictions, labels, order, 0, order.size());
}

gauc_result gauc_exact(const std::vector<float>& predictions, const std::vector<float>& labels,
                       const std::vector<std::uint64_t>& users) {
  SS_CHECK(labels.size() == predictions.size() && users.size() == predictions.size(),
           "gauc_exact: one label and one user per prediction");
  // One sort by (user, prediction): each user's examples form a run, in
  // prediction order; the runs (and so the sum) go by user key, whatever the
  // order of the examples.
  auto order = identity(predictions.size());
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return users[a] != users[b] ? users[a] < users[b] : predictions[a] < predictions[b];
  });
  gauc_result r;
  double weighted = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    while (j < order.size() && users[order[j]] == users[order[i]])
      ++j;
    ++r.users;
    const double auc = auc_sorted(predictions, labels, order, i, j);
    if (!std::isnan(auc)) {
      ++r.counted;
      r.examples += j - i;
      weighted += double(j - i) * auc;
    }
    i = j;
  }
  r.gauc = r.examples ? weighted / double(r.examples) : std::numeric_limits<double>::quiet_NaN();
  return r;
}

void evaluator::add(float logit, float label) {
  const double p = sigmoid(logit);
  acc_.add(bce_with_logit(logit, label), p, label);
  // Rank by logit: monotone in p and free of saturation ties at p = 1.
  preds_.push_back(logit);
  labels_.push_back(label);
}

void evaluator::add(float logit, float label, std::uint64_t user) {
  add(logit, label);
  users_.push_back(user);
}

void evaluator::merge(const evaluator& other) {
  users_.insert(users_.end(), other.users_.begin(), other.users_.end());
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
  SS_CHECK(users_.empty() || users_.size() == preds_.size(),
           "evaluator: examples with and without users");
  if (!users_.empty()) {
    r.grouped = true;
    r.gauc = gauc_exact(preds_, labels_, users_);
  }
  return r;
}

} // namespace model
