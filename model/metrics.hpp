#pragma once
// Quality metrics for CTR models (DESIGN.md section 5). All log-losses are in
// nats. Accumulators are mergeable, so per-worker partial results can be
// combined exactly (AUC included: it keeps the raw predictions).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace model {

// Numerically stable binary cross-entropy with logits: log(1+e^z) - y*z.
double bce_with_logit(double logit, double label);
inline double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }
// Binary entropy in nats of a base rate p in [0, 1]; 0 at p = 0 or 1.
double binary_entropy(double p);

// Running logloss / NE / calibration over a stream of (prediction, label).
struct ne_accumulator {
  double loss_sum = 0.0;  // sum of per-example logloss
  double pred_sum = 0.0;  // sum of predicted probabilities
  std::uint64_t count = 0;
  std::uint64_t positives = 0;

  void add(double loss, double prob, double label) {
    loss_sum += loss;
    pred_sum += prob;
    ++count;
    positives += label > 0.5 ? 1 : 0;
  }
  // A whole batch at once: sums of loss and predictions over `n` examples.
  void add_batch(double losses, double probs, std::uint64_t n, std::uint64_t pos) {
    loss_sum += losses;
    pred_sum += probs;
    count += n;
    positives += pos;
  }
  void merge(const ne_accumulator& o) {
    loss_sum += o.loss_sum;
    pred_sum += o.pred_sum;
    count += o.count;
    positives += o.positives;
  }
  double logloss() const { return count ? loss_sum / double(count) : 0.0; }
  double base_rate() const { return count ? double(positives) / double(count) : 0.0; }
  // Mean logloss divided by the entropy of the base rate; NaN when undefined
  // (no examples, or all labels equal).
  double ne() const;
  // Mean prediction / base rate; NaN when there are no positives.
  double calibration() const;
};

// Exact ROC AUC (Mann-Whitney U with average ranks for ties). NaN when either
// class is absent. O(n log n); sorts a copy.
double auc_exact(const std::vector<float>& predictions, const std::vector<float>& labels);

// Group AUC: sum over users u with both classes of n_u * AUC_u, divided by
// the sum of their n_u, where n_u counts u's examples (impressions) and AUC_u
// is auc_exact over u's examples alone (the same tie rule). Users with one
// class only have no AUC and are left out, examples and all. Exact; the
// result does not depend on the order of the examples. O(n log n).
struct gauc_result {
  double gauc = 0;            // NaN when no user has both classes
  std::uint64_t users = 0;    // distinct users
  std::uint64_t counted = 0;  // users with both classes (in the mean)
  std::uint64_t examples = 0; // their examples: the weights' sum
};
// predictions, labels and users: [n] each; users[i] is example i's user key.
gauc_result gauc_exact(const std::vector<float>& predictions, const std::vector<float>& labels,
                       const std::vector<std::uint64_t>& users);

// The full held-out evaluation: exact AUC plus NE, logloss and calibration;
// GAUC too when the examples carry users (grouped).
struct eval_result {
  std::uint64_t examples = 0;
  double ne = 0, logloss = 0, auc = 0, calibration = 0, base_rate = 0;
  bool grouped = false; // gauc is set (the examples named their users)
  gauc_result gauc;
};

class evaluator {
public:
  void add(float logit, float label);
  // With the example's user key. An evaluator takes all its examples with
  // users or all without (SS_CHECK in result()).
  void add(float logit, float label, std::uint64_t user);
  void merge(const evaluator& other);
  eval_result result() const;
  std::uint64_t size() const { return acc_.count; }

private:
  ne_accumulator acc_;
  std::vector<float> preds_, labels_;
  std::vector<std::uint64_t> users_; // [size] or empty
};

} // namespace model
