#include "checkpoint/cpr_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "model/check.hpp"

namespace checkpoint {

const char* to_string(cpr_policy p) {
  switch (p) {
    case cpr_policy::mfu:
      return "mfu";
    case cpr_policy::ssu:
      return "ssu";
    default:
      return "full";
  }
}

std::optional<cpr_policy> parse_cpr_policy(const std::string& s) {
  if (s == "full")
    return cpr_policy::full;
  if (s == "mfu")
    return cpr_policy::mfu;
  if (s == "ssu")
    return cpr_policy::ssu;
  return std::nullopt;
}

row_chooser::row_chooser(cpr_policy policy, std::uint64_t rows, double fraction,
                         std::uint64_t full_every, std::size_t sample_size, std::uint64_t seed)
    : policy_(policy), rows_(rows), full_every_(full_every), sample_size_(sample_size),
      rng_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {
  SS_CHECK(fraction > 0 && fraction <= 1, "row_chooser: fraction must be in (0, 1]");
  keep_ = std::max<std::uint64_t>(1, std::uint64_t(std::ceil(fraction * double(rows))));
  if (policy_ == cpr_policy::mfu)
    counts_.assign(rows_, 0);
  if (policy_ == cpr_policy::ssu) {
    SS_CHECK(sample_size_ > 0, "row_chooser: ssu needs a sample size");
    sample_.reserve(sample_size_);
  }
}

void row_chooser::touched(std::uint64_t row) {
  ++pending_;
  switch (policy_) {
    case cpr_policy::mfu:
      if (counts_[row] != std::numeric_limits<std::uint32_t>::max())
        ++counts_[row];
      break;
    case cpr_policy::ssu:
      if (sample_.size() < sample_size_) {
        sample_.push_back(row);
      } else { // keep this update with probability sample_size / pending
        const auto j = rng_.next() % pending_;
        if (j < sample_size_)
          sample_[std::size_t(j)] = row;
      }
      break;
    case cpr_policy::full:
      break;
  }
}

// The keep_ candidates (row, count) with the highest counts, ties to the
// lower row; ascending by row.
std::vector<std::uint64_t>
row_chooser::top(std::vector<std::pair<std::uint64_t, std::uint64_t>>& cand) {
  auto better = [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  if (cand.size() > keep_) {
    std::nth_element(cand.begin(), cand.begin() + std::ptrdiff_t(keep_), cand.end(), better);
    cand.resize(std::size_t(keep_));
  }
  std::vector<std::uint64_t> out;
  out.reserve(cand.size());
  for (const auto& c : cand)
    out.push_back(c.first);
  std::sort(out.begin(), out.end());
  return out;
}

row_choice row_chooser::plan_save() {
  row_choice out;
  const bool base = saves_ == 0 || (full_every_ > 0 && saves_ % full_every_ == 0);
  if (policy_ == cpr_policy::full || base) {
    out.full = true;
    return out;
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> cand;
  if (policy_ == cpr_policy::mfu) {
    for (std::uint64_t r = 0; r < rows_; ++r)
      if (counts_[r] > 0)
        cand.emplace_back(r, counts_[r]);
  } else {
    auto sample = sample_;
    std::sort(sample.begin(), sample.end());
    for (std::size_t i = 0; i < sample.size();) {
      std::size_t j = i;
      while (j < sample.size() && sample[j] == sample[i])
        ++j;
      cand.emplace_back(sample[i], j - i);
      i = j;
    }
  }
  out.rows = top(cand);
  return out;
}

void row_chooser::saved(const row_choice& choice) {
  ++saves_;
  pending_ = 0;
  sample_.clear();
  if (choice.full)
    std::fill(counts_.begin(), counts_.end(), 0u);
  else if (policy_ == cpr_policy::mfu)
    for (auto r : choice.rows)
      counts_[r] = 0;
}

row_chooser::taken row_chooser::begin_save(row_choice choice) {
  taken t;
  t.pending = std::exchange(pending_, 0);
  t.sample = std::move(sample_);
  sample_.clear();
  if (policy_ == cpr_policy::mfu) {
    auto take = [&](std::uint64_t r) {
      if (counts_[r] > 0)
        t.counts.emplace_back(r, std::exchange(counts_[r], 0u));
    };
    if (choice.full)
      for (std::uint64_t r = 0; r < rows_; ++r)
        take(r);
    else
      for (auto r : choice.rows)
        take(r);
  }
  t.choice = std::move(choice);
  return t;
}

void row_chooser::landed(const taken&) { ++saves_; }

void row_chooser::failed(const taken& t) {
  pending_ += t.pending;
  for (const auto& [r, c] : t.counts) {
    const std::uint64_t sum = std::uint64_t(counts_[r]) + c;
    counts_[r] = std::uint32_t(std::min<std::uint64_t>(sum, std::numeric_limits<std::uint32_t>::max()));
  }
  for (auto r : t.sample)
    if (sample_.size() < sample_size_)
      sample_.push_back(r);
}

std::size_t row_chooser::tracking_bytes() const {
  switch (policy_) {
    case cpr_policy::mfu:
      return counts_.size() * sizeof(std::uint32_t);
    case cpr_policy::ssu:
      return sample_size_ * sizeof(std::uint64_t);
    default:
      return 0;
  }
}

} // namespace checkpoint
