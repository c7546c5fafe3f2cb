#pragma once
// A measured calibration (sim/calibrate.hpp) as a calibration file's record
// (config/calibration_file.hpp), and this machine's kept calibration
// (config/kept_calibration.hpp) measured when a run asks for it.
#include <optional>
#include <string>

#include "config/calibration_file.hpp"
#include "config/options.hpp"
#include "config/train_config.hpp"
#include "sim/calibrate.hpp"

namespace tools {

// The record `shadowsync calibrate --out` writes: the constants, this
// machine's CPU, level and cores, the date and `command`.
runtime::calibration_record calibration_record_of(const runtime::calibration& c,
                                                  const runtime::train_config& cfg,
                                                  const std::string& command);

// Every constant of a calibration: runtime::calibrate (sim/calibrate.hpp),
// the remote terms over mutual TLS (deploy/calibrate_tls.hpp), then
// sim.gflops, sim.message-us and sim.core-contention from the handlers' job
// (measure_handler_cost).
std::optional<std::string> measure_calibration(const runtime::train_config& cfg,
                                               runtime::calibration& c);

// The handlers' job: its rows, and how many times it runs (the median).
inline constexpr std::size_t handler_job_rows = 100000;
inline constexpr int handler_jobs = 5;
// sim.core-contention fitted to the job's real run: its rows, its real
// runs (the median), the virtual runs that refine the fit, and the fit's
// bound. The fit's job is three times the handlers' so that a real run's
// start (7-67 ms on the AMD EPYC VM, which the virtual clock does not
// charge; docs/virtual-time.md) weighs little in its examples/s.
inline constexpr std::size_t contention_job_rows = 300000;
inline constexpr int contention_jobs = 3;
inline constexpr int contention_steps = 4;
inline constexpr double max_contention = 3.0;

// sim.message-us where handlers run: a job of the roles (2 trainers,
// S-EASGD, handler_job_rows synthetic rows, one host of this machine's
// cores) on the virtual clock with sim.cost=measured at c's constants and
// core contention 1; each handler's CPU time against the model's price of
// it, the mean difference (the median of handler_jobs jobs) added to
// c.message_us (never lowered). Sets
// c.handler_job_handlers and c.handler_job_gap_us. Each job alternates
// with the same job under dct.mp: what a role spends more there over what
// the model prices more (mp_scale, the median of the jobs) scales the
// one-core probes' dct.mp prices: the worker's (push and decode) and the
// embedding shard's (the thresholded reply). Before the gap, the workers'
// stepping handlers set c.gflops (runtime::dense_scale; c.gflops_probe
// keeps the probe's); last, c.core_contention is fitted to the job's real
// run on this machine's cores (c.contention_probe keeps the probe's).
std::optional<std::string> measure_handler_cost(const runtime::train_config& cfg,
                                                runtime::calibration& c);

// sim.calibration = this-machine on a virtual-clock run whose machine has no
// kept calibration yet: measures one on the default model and batch (as
// `shadowsync calibrate` does, 15-60 s) and keeps it at
// runtime::kept_calibration_path(), saying so. An existing file is read,
// never rewritten: a damaged one is an error naming it. Errors name the path.
std::optional<std::string> keep_machine_calibration(const runtime::option_set& o);

} // namespace tools
