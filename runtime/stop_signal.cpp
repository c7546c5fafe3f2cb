#include "runtime/stop_signal.hpp"

#include <atomic>
#include <csignal>

namespace runtime {

namespace {

std::atomic<int> requested{0};
static_assert(std::atomic<int>::is_always_lock_free, "read in a signal handler");

// The first of either signal: later ones of both kinds take the default
// action (sigaction is async-signal-safe).
extern "C" void on_stop_signal(int sig) {
  requested.store(sig, std::memory_order_relaxed);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGINT, &dfl, nullptr);
  sigaction(SIGTERM, &dfl, nullptr);
}

} // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_requested() { return requested.load(std::memory_order_relaxed); }

void request_stop(int sig) { requested.store(sig, std::memory_order_relaxed); }

std::string signal_name(int sig) {
  switch (sig) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "signal " + std::to_string(sig);
  }
}

} // namespace runtime
