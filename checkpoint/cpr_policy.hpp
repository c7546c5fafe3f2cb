#pragma once
// Which rows of one embedding shard each CPR save writes (Maeng et al., "CPR:
// Understanding and improving failure tolerant training for deep learning
// recommendation with partial recovery", MLSys'21; DESIGN.md section 11).
//
//   full  every save writes every row;
//   mfu   most frequently used: a counter per row counts its updates since
//         it was last saved; a save writes the ceil(fraction x rows) rows
//         with the highest counts (ties: the lower row first) and zeroes
//         their counters. Rows never chosen keep counting, so they rise.
//   ssu   sub-sampled used: the same choice made from a fixed-size uniform
//         sample of the updates of the interval (reservoir sampling, Vitter's
//         algorithm R, seeded), so memory is the sample's, not a counter per
//         row. A row updated more often appears more often in the sample and
//         ranks higher; a row the sample missed waits for the next full save.
// For mfu and ssu, save number 0 and then every `full_every`-th is a full
// save (the base the partial saves are applied on); full_every = 0 means
// only the first.
//
// Rows are a shard's flat local rows [0, rows). Pure: no I/O, no CAF.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/synthetic_random.hpp"

namespace checkpoint {

enum class cpr_policy { full, mfu, ssu };

const char* to_string(cpr_policy p);
std::optional<cpr_policy> parse_cpr_policy(const std::string& s);

struct row_choice {
  bool full = false;                // every row (rows is then empty)
  std::vector<std::uint64_t> rows;  // else these, ascending
};

class row_chooser {
public:
  // fraction in (0, 1]; sample_size > 0 for ssu.
  row_chooser(cpr_policy policy, std::uint64_t rows, double fraction, std::uint64_t full_every,
              std::size_t sample_size, std::uint64_t seed);

  // `row` was updated once.
  void touched(std::uint64_t row);
  // The rows of the next save. Nothing is forgotten yet: the rows stay
  // marked until saved() says this save has landed, so a save that fails
  // (ENOSPC, say) is chosen again, with the updates since, at the next try.
  // No touched() between plan_save() and saved() (the save runs in one
  // handler); a save written in the background uses begin_save() instead.
  row_choice plan_save();
  // The planned save landed: its rows are forgotten (counters zeroed, the
  // sample emptied) and the schedule of full saves moves on.
  void saved(const row_choice& choice);

  // A save written while updates go on (a background writer): what it took
  // from the bookkeeping when it began, given back if it fails.
  struct taken {
    row_choice choice;
    std::uint64_t pending = 0;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> counts; // mfu: (row, count)
    std::vector<std::uint64_t> sample;                           // ssu
  };
  // The planned save begins: its rows are forgotten now, so the updates
  // during its write count for the next save.
  taken begin_save(row_choice choice);
  // It landed: the schedule of full saves moves on (saved() for the rest).
  void landed(const taken& t);
  // It failed: what it took is given back (mfu: its counters are added
  // back; ssu: its sample entries rejoin the sample while there is room).
  void failed(const taken& t);

  std::uint64_t saves() const { return saves_; }
  // Updates seen since the last save.
  std::uint64_t pending_updates() const { return pending_; }
  // Memory of the bookkeeping: mfu a counter per row, ssu the sample.
  std::size_t tracking_bytes() const;
  cpr_policy policy() const { return policy_; }

private:
  std::vector<std::uint64_t> top(std::vector<std::pair<std::uint64_t, std::uint64_t>>& cand);

  cpr_policy policy_;
  std::uint64_t rows_;
  std::uint64_t keep_; // rows a partial save writes at most
  std::uint64_t full_every_;
  std::uint64_t saves_ = 0;
  std::uint64_t pending_ = 0;
  std::vector<std::uint32_t> counts_;  // mfu
  std::vector<std::uint64_t> sample_;  // ssu: the reservoir
  std::size_t sample_size_ = 0;
  data::split_mix64 rng_; // ssu: the reservoir's draws
};

} // namespace checkpoint
