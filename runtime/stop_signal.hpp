#pragma once
// A stop that keeps the work: the first SIGINT or SIGTERM asks the running
// training to end at the next batch boundary (sequential engine) or the next
// progress poll (simulated cluster), where a checkpoint of that point is
// written when checkpoint.dir is set; the handler resets itself, so a second
// signal ends the process at once (the default action). The exit code of a
// stopped run is 128 + the signal (130 SIGINT, 143 SIGTERM).
#include <string>

namespace runtime {

// Installs the handlers (train; idempotent).
void install_stop_handlers();
// 0, or the signal that asked for a stop.
int stop_requested();
// "SIGTERM", "SIGINT".
std::string signal_name(int sig);
// For tests: as if `sig` had arrived (0 clears).
void request_stop(int sig);

} // namespace runtime
