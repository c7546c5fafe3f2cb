#pragma once
// `shadowsync launch`: starts every node of a cluster spec on this machine as
// a child process (`<exe> node --node=ID <args>`), streams their output line
// by line prefixed with "[ID] ", and returns the coordinator's exit code.
// Children die with the launcher (PR_SET_PDEATHSIG). Once the coordinator has
// exited, the others get `grace` to finish (they exit when the coordinator
// ends the job or is gone), then SIGTERM, then SIGKILL: no process is left
// behind. The first SIGINT/SIGTERM to the launcher goes to the coordinator's
// process, which stops the job at a batch boundary and ends the other nodes
// (then the grace as above); a second one goes to every node.
// With restart_on_failure, a node other than the coordinator that exits
// with a non-zero status (or dies of a signal) while the coordinator runs is
// started again, up to max_restarts times per node: with
// recovery.mode=partial a shard node rejoins and reloads its shards.
#include <chrono>
#include <string>
#include <vector>

namespace runtime {

struct launch_plan {
  std::string exe;                 // the shadowsync binary
  std::vector<std::string> nodes;  // node ids, spec order
  std::string coordinator;         // one of nodes
  std::vector<std::string> args;   // passed to every node after --node=ID
  std::chrono::milliseconds grace{10000};
  bool restart_on_failure = false;
  int max_restarts = 3;
};

// Returns the coordinator's exit code (128 + signal if it was killed), or 1
// when a child could not be started.
int launch_local(const launch_plan& plan);

// The scheduler threads of each of `nodes` nodes started on one machine of
// `cores` cores: the cores split between them, at least 1 each. (A node
// left to runtime::scheduler_threads would take every core: 3 nodes on 2
// cores would run 6 polling scheduler threads; docs/RESULTS.md section 6
// measures it.)
std::size_t threads_per_node(std::size_t cores, std::size_t nodes);

} // namespace runtime
