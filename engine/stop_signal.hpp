#pragma once
// A stop that keeps the work: the first SIGINT or SIGTERM asks the running
// training to end at the next batch boundary (sequential engine) or the next
// progress poll (simulated cluster), where a checkpoint of that point is
// written when checkpoint.dir is set. A second signal at least
// `repeat_window` after the first ends the process at once (the default
// action); one within the window is the same request delivered twice (GNU
// `timeout` signals its child and then the child's process group; a
// scheduler may signal a process and its group) and is ignored. The exit code
// of a stopped run is 128 + the signal (130 SIGINT, 143 SIGTERM).
#include <string>

namespace runtime {

// A second signal within this many milliseconds of the first is the same one.
constexpr long stop_repeat_window_ms = 1000;

// Installs the handlers (train; idempotent).
void install_stop_handlers();
// 0, or the signal that asked for a stop.
int stop_requested();
// "SIGTERM", "SIGINT".
std::string signal_name(int sig);
// For tests: as if `sig` had arrived (0 clears).
void request_stop(int sig);

} // namespace runtime
