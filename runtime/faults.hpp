#pragma once
// Fault injection in the simulated cluster (faults.kill; DESIGN.md section
// 10). An entry is ROLE@WHEN:
//   ROLE  trainer-N, embedding-shard-N or dense-shard-N
//   WHEN  a fraction of the training examples in (0, 1) ("0.5"), or a time
//         since the start of training ("12.5s"; virtual under sim.clock=virtual)
// A killed trainer leaves the job as a lost node's trainers do in multi-node
// mode: the ring re-forms among the survivors, EASGD loses a client, and the
// metrics' lost_trainers name it. A killed shard ends the job with an error
// naming it (recovery is the CPR issue's).
//
// Timing. Under the virtual clock a time is exact (an engine event) and a
// fraction is checked at each progress poll (every 0.2 virtual s), so both
// replay identically. Under the wall clock both are checked at the polls.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace runtime {

struct fault_kill {
  enum class role { trainer, embedding_shard, dense_shard } kind = role::trainer;
  std::size_t index = 0;
  std::optional<double> fraction; // of the training examples
  std::optional<double> seconds;  // since training started
  std::string text;               // as given, for messages
};

// Parses faults.kill entries; an error names the entry and what was expected.
std::optional<std::string> parse_fault_kills(const std::vector<std::string>& entries,
                                             std::vector<fault_kill>& out);

} // namespace runtime
