#include "engine/stop_signal.hpp"

#include <atomic>
#include <csignal>
#include <ctime>

namespace runtime {

namespace {

std::atomic<int> requested{0};
std::atomic<long long> first_ns{0}; // CLOCK_MONOTONIC of the first signal
static_assert(std::atomic<int>::is_always_lock_free, "read in a signal handler");
static_assert(std::atomic<long long>::is_always_lock_free, "read in a signal handler");

long long monotonic_ns() { // clock_gettime is async-signal-safe
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

// The first of either signal asks for the stop. A later one within the
// window is the same request delivered twice; after it, the default action
// (sigaction and raise are async-signal-safe).
extern "C" void on_stop_signal(int sig) {
  const auto now = monotonic_ns();
  long long expected = 0;
  if (first_ns.compare_exchange_strong(expected, now)) {
    requested.store(sig, std::memory_order_relaxed);
    return;
  }
  if (now - expected < stop_repeat_window_ms * 1000000LL)
    return;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
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

void request_stop(int sig) {
  requested.store(sig, std::memory_order_relaxed);
  if (sig == 0)
    first_ns.store(0);
}

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
