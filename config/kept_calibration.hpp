#pragma once
// sim.calibration = this-machine: the virtual clock's constants from a
// calibration of the machine the run is on, measured once and kept
// (docs/virtual-time.md, "Calibrations: which machine the constants
// model"). config/default.ini asks for it; the option's built-in default
// stays the built-in constants.
//
// The kept file: KEPT_DIR/calibrations/MACHINE.json, where KEPT_DIR is
// $SHADOWSYNC_STATE_DIR, else $XDG_STATE_HOME/shadowsync, else
// $HOME/.local/state/shadowsync, and MACHINE names the CPU model, the
// instruction-set level of this build and the cores
// (e.g. intel-r-xeon-r-processor-x86-64-v3-2core), so a home folder shared by
// several machines keeps one file for each. `shadowsync train` measures it
// when it is missing and the run is on the virtual clock
// (tools/kept_calibration.hpp); nothing ever rewrites an existing file.
// Runs that do not use the virtual clock (sequential, wall clock,
// multi-node) have no use for the constants and read it as not given.
#include <string>

#include "config/options.hpp"

namespace runtime {

inline constexpr const char* this_machine_calibration = "this-machine";

// /proc/cpuinfo's first "model name", "unknown CPU" if none.
std::string cpu_model_name();
// The instruction-set level this build targets (CMake's SS_ISA).
std::string build_isa_level();
// The file name's stem for this machine: CPU, level and cores as lower-case
// letters, digits and '-'.
std::string this_machine_key();
// Where this machine's calibration is kept (see above); "" when neither
// $SHADOWSYNC_STATE_DIR, $XDG_STATE_HOME nor $HOME is set.
std::string kept_calibration_path();

// cluster.mode = simulated with sim.clock = virtual: the runs whose timing
// comes from the constants.
bool uses_virtual_clock(const option_set& o);
// sim.calibration as it applies to this run: "" for this-machine when the
// run does not use the virtual clock, the option's value otherwise.
std::string effective_calibration(const option_set& o);

} // namespace runtime
