#pragma once
// [sim] options of `train` with cluster.mode=simulated (DESIGN.md section 10):
//   sim.clock            virtual (the default: the discrete-event loop of
//                        sim/virtual_time.hpp) or wall (the scheduler's
//                        threads, wall time)
//   sim.cores-per-host   cores of each simulated host (virtual clock)
//   sim.cost             model (counted work, deterministic) or measured
//                        (each handler's thread CPU time)
//   sim.gflops, sim.memory-gbps, sim.sync-gbps, sim.message-us, sim.lookup-row-ns,
//   sim.push-row-ns, sim.parse-example-ns, sim.batch-id-ns, sim.mp-push-value-ns,
//   sim.mp-reply-value-ns, sim.mp-decode-value-ns, sim.core-contention,
//   sim.remote-message-us, sim.remote-gbps       the model's constants
//   sim.calibration      a calibration file or a shipped preset's name: the
//                        constants above where not given otherwise
//                        (config/calibration_file.hpp)
//   sim.machine-cores    hosts sharing one machine's cores
//   faults.kill, faults.freeze, faults.slow-nic   injected faults (config/faults.hpp)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/faults.hpp"
#include "config/modes.hpp"
#include "config/options.hpp"

namespace runtime {

// dct.mp: the residual map's rows at which sim.mp-push-value-big-ns is
// measured (a long run's worker: the map holds every row it has pushed).
constexpr double mp_push_big_map_rows = 524288;

// The discrete-event engine's settings (sim/virtual_time.hpp).
struct virtual_settings {
  std::size_t cores_per_host = 2;
  bool measured = false;    // sim.cost=measured: thread CPU time, not the model
  double gflops = 44;       // model: effective rate of one core (calibrate)
  double memory_gbps = 7.5; // model: memory traffic of one core
  // model: the dense sync's memory traffic (snapshots, merges, elastic
  // updates, ring chunks, DCT deltas: vectors of the replica's size, which
  // the caches hold), GB/s (calibrate); 0 = memory_gbps
  double sync_gbps = 0;
  double message_us = 1;    // model: the fixed cost of a handler
  // model: an embedding shard's time per row it gathers for a lookup and per
  // row it updates for a push, ns (calibrate); 0 = the rows' bytes at
  // memory_gbps (4 x dim per gathered row, 12 x dim per updated one)
  double lookup_row_ns = 0;
  double push_row_ns = 0;
  // model: a reader's time per example it reads and parses, ns (calibrate);
  // 0 = about 2 KB of memory traffic an example at memory_gbps
  double parse_example_ns = 0;
  // model: a worker's own time per id of a batch besides its dense work
  // (keys, de-duplication, the replies' rows, the pushes' gradients), ns
  // (calibrate); 0 = not charged
  double batch_id_ns = 0;
  // model, dct.mp: a worker's time per gradient value it thresholds for a
  // push (the rows' residuals added and kept, the threshold, the encoding)
  // and a shard's per value of a thresholded reply beyond the rows' lookup
  // (the threshold, its estimates, the encoding), ns (calibrate); 0 = 12
  // and 8 bytes a value at memory_gbps
  double mp_push_value_ns = 0;
  double mp_reply_value_ns = 0;
  // dct.mp: per value of a thresholded message's dense size, its decode and
  // the scatter of its entries (a worker's reply, a shard's push), ns
  // (calibrate); 0 = 4 bytes a value at memory_gbps
  double mp_decode_value_ns = 0;
  // dct.mp: the residual map's rows at mp_push_value_ns, and the push's
  // time per value at a map of mp_push_big_map_rows (0: flat).
  double mp_push_map_rows = 0;
  double mp_push_value_big_ns = 0;
  // sim.core-contention: a handler's work (charged or measured) x (1 +
  // (core_contention - 1) x k / (cores_per_host - 1)), k = the host's other
  // cores busy when it starts; 1 = none (calibrate).
  double core_contention = 1;
  // sim.machine-cores: every host runs on one machine of this many cores (a
  // handler needs a free core of its host and one of the machine); 0 = each
  // host is a machine of its own.
  std::size_t machine_cores = 0;
  // sim.remote-message-us, sim.remote-gbps: the core time, on each side, of
  // a message between two hosts (serialisation, the socket): us per message
  // plus its bytes at this rate; 0, 0 = none.
  double remote_message_us = 0;
  double remote_gbps = 0;
  // sim.remote-tls: messages between hosts are priced with the TLS pair
  // (sim.remote-tls-message-us, sim.remote-tls-gbps) instead; 0, 0 = none.
  bool remote_tls = false;
  double remote_tls_message_us = 0;
  double remote_tls_gbps = 0;
  // sim.remote-streamed-message-us, sim.remote-tls-streamed-message-us: the
  // per-message term of a side whose I/O lane is still busy with the message
  // before (no wake-up to pay); 0 = the per-message term above, always.
  double remote_streamed_message_us = 0;
  double remote_tls_streamed_message_us = 0;
  // sim.jitter: each handler's cost x (1 + jitter x u), u uniform in [-1, 1)
  // drawn from `seed` and the handler's number (repeatable); 0 = none.
  double jitter = 0;
  std::uint64_t seed = 1;   // the run's model.seed
  // The scheduler each host's threads run (scheduler.policy,
  // scheduler.max-throughput; sim/run_queues.hpp): CAF's work stealing
  // (true) or sharing, and how many messages an actor handles a turn
  // before its thread takes the next job (0: while its mailbox holds any).
  bool stealing = true;
  std::size_t max_throughput = 0;
  // sim.send-at=work: a message to a role of the sender's host leaves when
  // the work its handler charged before the send is done (scaled as the
  // handler's cost: jitter, contention, measured CPU), not at the
  // handler's end.
  bool send_at_work = false;
};

struct sim_settings {
  bool virtual_clock = false;
  bool one_host = false; // sim.placement=one-host: every role on host 0
  virtual_settings engine;
  // Where the cost constants came from: "built-in defaults" or the
  // calibration file with what it models, plus any sim.* constant given
  // otherwise (config/calibration_file.hpp, constants_source).
  std::string constants = "built-in defaults";
  bool calibrated = false; // sim.calibration was given
  std::vector<fault_event> faults; // faults.* (config/faults.hpp), in option order
};

void add_sim_options(option_set& o);

// Reads the options; errors name the key. `mode` is cluster.mode.
std::optional<std::string> build_sim_settings(const option_set& o, cluster_mode mode,
                                              sim_settings& out);

} // namespace runtime
