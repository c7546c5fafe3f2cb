#pragma once
// A calibration file: the virtual clock's cost constants of one machine
// (sim.gflops ... sim.remote-gbps), as `shadowsync calibrate --out=FILE`
// writes them and `sim.calibration=FILE` reads them (docs/virtual-time.md).
// JSON, one object:
//   {"shadowsync_calibration": 1,
//    "machine": {"cpu": "AMD EPYC ...", "isa": "x86-64-v4", "cores": 2,
//                "date": "2026-11-27T03:50:00Z", "command": "shadowsync calibrate ..."},
//    "note": "how it was measured (optional)",
//    "sim": {"gflops": 75.1, "memory-gbps": 19.8, "message-us": 0.37,
//            "lookup-row-ns": 8.6, "push-row-ns": 21.4, "core-contention": 1.1,
//            "remote-message-us": 31.1, "remote-gbps": 4.2}}
// Every key but "note" is required; any other key, a value of another type,
// a missing, unreadable or truncated file is an error naming the file and
// the key. A value out of its option's range is refused when it is applied
// (apply_calibration), naming the key and the file.
//
// sim.calibration=NAME without a '/' and without ".json" names a shipped
// preset, config/calibrations/NAME.json (looked up in the source tree's
// config/calibrations and in ../config/calibrations beside the executable).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/options.hpp"

namespace runtime {

struct calibration_record {
  std::string cpu, isa, date, command; // what machine the constants model
  std::int64_t cores = 0;
  std::string note;                    // optional
  std::map<std::string, double> sim;   // option name without "sim." -> value
};

// The constants' option names without "sim.", in the file's order.
const std::vector<std::string>& calibration_keys();
// Those of them a file may leave out (read as 0: the cost model's default
// for that work); a file of an older `calibrate` has none of them.
const std::vector<std::string>& calibration_optional_keys();

// The record as the file's JSON text (ends with a newline).
std::string calibration_json(const calibration_record& r);

// Reads and checks `path`; errors start with "calibration file 'PATH'".
std::optional<std::string> read_calibration(const std::string& path, calibration_record& out);

// `value` (sim.calibration) as a path: itself, or a preset's file. Error
// when a preset does not exist (naming the presets there are).
std::optional<std::string> resolve_calibration(const std::string& value, std::string& path);

// "PATH (CPU, ISA, N cores, DATE)": what the constants model, for the run's
// summary and metrics.
std::string describe_calibration(const std::string& path, const calibration_record& r);

// sim.calibration, if given: reads the file and sets every sim.KEY that the
// command line or the INI file did not set to the file's value (source
// "calibration PATH"), so that the effective INI a run saves reproduces
// it. Errors name the file and the key. Nothing is measured.
std::optional<std::string> apply_calibration(option_set& o);

// "built-in defaults" or describe_calibration(...), plus the sim.* constants
// set otherwise: "...; sim.gflops from the command line".
std::string constants_source(const option_set& o);

} // namespace runtime
