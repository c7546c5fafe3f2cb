#pragma once
// Fault injection in the simulated cluster (DESIGN.md section 10). Three
// options, each a list of entries:
//   faults.kill       ROLE@WHEN                   the role dies
//   faults.freeze     ROLE@WHEN+DURATION          its host runs nothing for DURATION
//   faults.slow-nic   ROLE@WHEN+DURATION*FACTOR   its host's NIC at FACTOR x bandwidth
// where
//   ROLE      trainer-N, embedding-shard-N or dense-shard-N
//   WHEN      a fraction of the training examples in (0, 1) ("0.5"), or a time
//             since the start of training ("12.5s"; virtual under sim.clock=virtual)
//   DURATION  seconds, with the unit ("2s"; virtual under sim.clock=virtual)
//   FACTOR    a number in (0, 1]: the NIC's share of its bandwidth
//
// A killed trainer leaves the job as a lost node's trainers do in multi-node
// mode: the ring re-forms among the survivors, EASGD loses a client, and the
// metrics' lost_trainers name it. A killed shard ends the job with an error
// naming it, unless recovery.mode=partial restarts it from its own newest save
// (runtime/shard_recovery.hpp; faults.mtbf draws such kills:
// runtime/recovery_config.hpp). A frozen trainer's host (its
// workers, syncer and reader) or shard's host starts no handler until the
// freeze ends; messages to it wait. A slow NIC needs the network model
// (net.enabled).
//
// Timing. Under the virtual clock a time is exact (an engine event) and a
// fraction is checked at each progress poll (every 10 virtual ms), so both
// replay identically. Under the wall clock both are checked at the polls
// (every 200 ms), and so is a freeze's end.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace runtime {

struct fault_event {
  enum class action { kill, freeze, slow_nic } what = action::kill;
  enum class role { trainer, embedding_shard, dense_shard } kind = role::trainer;
  std::size_t index = 0;
  std::string who;                // the role as given: "trainer-1"
  std::optional<double> fraction; // of the training examples
  std::optional<double> seconds;  // since training started
  double duration = 0;            // freeze, slow_nic: seconds
  double factor = 1;              // slow_nic: share of the bandwidth
  std::string text;               // "faults.kill entry 'trainer-1@0.5'", for messages
};

// Parses the entries of option `key` (faults.kill, faults.freeze or
// faults.slow-nic), appending to `out`; an error names the entry and what
// was expected.
std::optional<std::string> parse_faults(const std::string& key,
                                        const std::vector<std::string>& entries,
                                        std::vector<fault_event>& out);

} // namespace runtime
