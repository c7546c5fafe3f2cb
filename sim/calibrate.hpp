#pragma once
// `shadowsync calibrate`: the constants of the virtual clock's cost model
// (sim.gflops, sim.memory-gbps, sim.sync-gbps, sim.message-us, sim.lookup-row-ns,
// sim.push-row-ns, sim.parse-example-ns, sim.batch-id-ns, sim.mp-push-value-ns,
// sim.mp-reply-value-ns, sim.mp-decode-value-ns, sim.core-contention,
// sim.remote-message-us, sim.remote-gbps; sim/virtual_time.hpp),
// measured on this machine:
//   gflops       3 x the model's forward FLOPs per example (what a worker's
//                batch charges) x examples / seconds of a worker's dense
//                work on synthetic batches whose rows were looked up
//                beforehand (forward, backward, the lock-free dense step on
//                a Hogwild replica), less the dense step's memory traffic
//                the model charges apart (16 bytes a parameter at
//                memory-gbps): an effective rate, not a GEMM peak
//   parse-example-ns
//                a reader's seconds per example reading those batches from
//                the file (read, parse, hash), as a trainer's reader does
//   lookup-row-ns, push-row-ns
//                per distinct row of those batches, an embedding shard's
//                lookup (the keys' checks, the row gathered into the reply)
//                and push (the row and its optimiser state stepped), with
//                the shard's own code (sim/calibrate_roles.hpp)
//   batch-id-ns  per id of those batches, a worker's own handling of a
//                batch besides its dense work: the keys, their
//                de-duplication and split over the shards, the replies'
//                rows into its input, the pushes' gradients (the worker's
//                own code, sim/calibrate_roles.hpp)
//   mp-push-value-ns, mp-reply-value-ns
//                dct.mp at the run's dct.* settings: per gradient value a
//                worker's straight-through push (residuals, threshold,
//                encoding), and per value of a shard's thresholded reply
//                beyond the rows' lookup (sim/calibrate_roles.hpp)
//   mp-decode-value-ns
//                dct.mp: per value of those replies' dense size, a worker's
//                decode of the reply and the scatter of its entries.
//                calibrate() times the three on one core in tight loops;
//                `shadowsync calibrate` then scales them by what a measured
//                job under dct.mp spends on them (mp_worker_scale,
//                mp_shard_scale; tools/calibrate_handlers.cpp)
//   memory-gbps  bytes read + written per second by memcpy of 64 MiB
//   sync-gbps    the same with buffers of the replica's parameters (the
//                dense sync's snapshots, merges and elastic updates move
//                vectors of that size, which the caches hold)
//   message-us   a handler's fixed cost: here (message_cold_us) a ping-pong
//                between two CAF actors on one scheduler thread where each
//                handler first sweeps a buffer the size of the core's L2 (as
//                a worker's batch leaves the caches), the time from one
//                handler's end of work to the next one's start (the send,
//                the scheduler's turn, the dispatch), median of nine rounds
//                of 2 000 messages; `shadowsync calibrate` then adds what a
//                measured job of the roles spends beyond the model's price
//                (tools/calibrate_handlers.cpp). The same ping-pong with
//                warm caches (message_warm_us) is the local part the remote
//                terms subtract.
//   core-contention
//                a Hogwild step's time (forward, backward and the dense
//                step, as a worker's batch) while every core of this
//                machine steps one shared replica at once (the threads'
//                mean), over its time alone on the fastest of them
//                (median of seven rounds): what busy cores cost each other
//                (the replica's cache lines, shared caches and memory) and
//                what a VM's slower CPU costs, which the one-at-a-time
//                engine does not see (1 on one core)
//   remote-message-us, remote-gbps
//                a message between two nodes on loopback
//                (sim/calibrate_remote.hpp)
//   remote-tls-message-us, remote-tls-gbps
//                the same over mutual TLS: measured by the shadowsync tool
//                (deploy/calibrate_tls.hpp), not by calibrate()
// The others are medians of five timed rounds on one core.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/calibrate_remote.hpp"
#include "config/train_config.hpp"

namespace runtime {

struct calibration {
  double gflops = 0, memory_gbps = 0, message_us = 0;
  double sync_gbps = 0; // memcpy of the replica's size (the dense sync's traffic)
  double message_warm_us = 0; // the ping-pong with warm caches (the remote terms' local part)
  double message_cold_us = 0; // the ping-pong whose handlers sweep the L2
  // The handlers' job (tools/calibrate_handlers.cpp): its handlers, and
  // what each cost beyond the model's price with message_cold_us.
  std::uint64_t handler_job_handlers = 0;
  double handler_job_gap_us = 0;
  // The GEMM probe's rate (gflops before the job), and the factor the job's
  // dense steps took over its price (dense_scale, sim/calibrate_job.hpp):
  // gflops is the probe's over it, the rate the job's workers stepped at.
  double gflops_probe = 0, dense_job_scale = 1;
  // ... and how their measured times spread around the model's price (the
  // price-weighted coefficient of variation, pooled over the roles): jitter,
  // the uniform spread of the same variance (sim.jitter).
  double handler_job_cost_cv = 0;
  double jitter = 0;
  double lookup_row_ns = 0, push_row_ns = 0;
  double parse_example_ns = 0;
  double batch_id_ns = 0;
  double mp_push_value_ns = 0, mp_reply_value_ns = 0, mp_decode_value_ns = 0;
  double mp_push_map_rows = 0, mp_push_value_big_ns = 0; // the push at mp_push_big_map_rows
  double mp_stream_map_rows = 0, mp_stream_value_ns = 0; // the push as a run's map grew
  // The handlers' job under dct.mp (tools/calibrate_handlers.cpp): what the
  // worker's and the embedding shard's dct.mp work cost there over the
  // probes' prices; the mp prices above include them.
  double mp_worker_scale = 1, mp_shard_scale = 1;
  double core_contention = 1;
  // core_contention: where the virtual clock replays the handlers' job's
  // real run (tools/calibrate_handlers.cpp; 1-3, from the probe's), with the
  // job's real and last virtual examples/s; contention_probe: the dense
  // probe's (measure_contention), where the fit starts.
  double contention_probe = 1;
  double contention_real_eps = 0, contention_virtual_eps = 0;
  remote_costs remote; // sim/calibrate_remote.hpp
  remote_costs remote_tls; // over mutual TLS (deploy/calibrate_tls.hpp); 0s until measured
  unsigned contention_threads = 1; // the threads core_contention was measured with
  double contention_lo = 1, contention_hi = 1; // its rounds' range
  double seconds = 0; // the measurement's own wall time
};

std::optional<std::string> calibrate(const train_config& cfg, calibration& out);

} // namespace runtime
