// The stop handlers (engine/stop_signal.hpp) in a forked child, so that the
// default action of a real second signal ends the child, not the test.
#include <doctest/doctest.h>

#include <csignal>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/stop_signal.hpp"

namespace {

void sleep_ms(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

// Forks; the child installs the handlers, raises `sig` twice `gap_ms` apart
// and exits 10 + the signal it recorded. Returns the child's wait status.
int run_child(int sig, long gap_ms) {
  const pid_t pid = fork();
  if (pid == 0) {
    runtime::install_stop_handlers();
    raise(sig);
    if (gap_ms > 0)
      sleep_ms(gap_ms);
    raise(sig);
    _exit(10 + runtime::stop_requested());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

} // namespace

TEST_CASE("stop signal: the same signal twice at once is one request (timeout's double delivery)") {
  const int status = run_child(SIGTERM, 0);
  REQUIRE(WIFEXITED(status)); // the process went on to its own exit
  CHECK(WEXITSTATUS(status) == 10 + SIGTERM);
}

TEST_CASE("stop signal: a second signal after the window ends the process at once") {
  const int status = run_child(SIGINT, runtime::stop_repeat_window_ms + 200);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
}
