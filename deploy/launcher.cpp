#include "deploy/launcher.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace runtime {

namespace {

volatile std::sig_atomic_t interrupted = 0;
volatile std::sig_atomic_t last_signal = 0;
void on_signal(int sig) {
  if (interrupted < 2)
    interrupted = interrupted + 1;
  last_signal = sig;
}

struct child {
  std::string id;
  pid_t pid = -1;
  int fd = -1;        // read end of its stdout + stderr
  std::string partial; // an incomplete last line
  bool running = false;
  int status = 0;
  int restarts = 0;
};

int exit_code_of(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 1;
}

bool start(const launch_plan& plan, child& c) {
  // O_CLOEXEC: a node must not inherit the read ends of the other nodes'
  // pipes (it would keep them open after their writer died). dup2 onto the
  // child's stdout/stderr clears the flag on those two.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return false;
  const pid_t parent = getpid();
  c.pid = fork();
  if (c.pid < 0)
    return false;
  if (c.pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A process group of its own: a terminal's Ctrl-C (sent to the foreground
    // group) reaches the launcher alone, which passes it to the coordinator.
    setpgid(0, 0);
    if (getppid() != parent)
      _exit(1); // the launcher died before prctl
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<std::string> argv{plan.exe, "node", "--node=" + c.id};
    argv.insert(argv.end(), plan.args.begin(), plan.args.end());
    std::vector<char*> ptrs;
    for (auto& a : argv)
      ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    execv(plan.exe.c_str(), ptrs.data());
    std::fprintf(stderr, "cannot run %s: %s\n", plan.exe.c_str(), std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  c.fd = fds[0];
  fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
  c.running = true;
  return true;
}

void emit(const std::string& id, const std::string& line) {
  std::printf("[%s] %s\n", id.c_str(), line.c_str());
  std::fflush(stdout);
}

// Reads what is available; returns false at EOF.
bool drain(child& c) {
  char buf[4096];
  for (;;) {
    const auto n = read(c.fd, buf, sizeof buf);
    if (n > 0) {
      c.partial.append(buf, std::size_t(n));
      for (auto nl = c.partial.find('\n'); nl != std::string::npos; nl = c.partial.find('\n')) {
        emit(c.id, c.partial.substr(0, nl));
        c.partial.erase(0, nl + 1);
      }
      continue;
    }
    if (n == 0) {
      if (!c.partial.empty())
        emit(c.id, c.partial);
      c.partial.clear();
      return false;
    }
    return errno == EAGAIN || errno == EINTR;
  }
}

void signal_all(std::vector<child>& cs, int sig) {
  for (auto& c : cs)
    if (c.running)
      kill(c.pid, sig);
}

} // namespace

int launch_local(const launch_plan& plan) {
  using clock_type = std::chrono::steady_clock;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<child> cs;
  for (const auto& id : plan.nodes) {
    cs.push_back(child{});
    cs.back().id = id;
    if (!start(plan, cs.back())) {
      std::fprintf(stderr, "[launch] cannot start node %s: %s\n", id.c_str(), std::strerror(errno));
      cs.pop_back();
      signal_all(cs, SIGKILL);
      return 1;
    }
    std::printf("[launch] node %s: pid %d\n", id.c_str(), int(cs.back().pid));
  }
  std::fflush(stdout);
  int coordinator_code = -1;
  clock_type::time_point grace_end{}, kill_at{};
  bool termed = false, killed = false, forwarded = false, stop_all = false;
  for (;;) {
    std::vector<pollfd> pfds;
    for (auto& c : cs)
      if (c.fd >= 0)
        pfds.push_back(pollfd{c.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 100);
    for (auto& c : cs)
      if (c.fd >= 0 && !drain(c)) {
        close(c.fd);
        c.fd = -1;
      }
    for (auto& c : cs)
      if (c.running && waitpid(c.pid, &c.status, WNOHANG) == c.pid) {
        c.running = false;
        const int code = exit_code_of(c.status);
        std::printf("[launch] node %s exited with status %d\n", c.id.c_str(), code);
        std::fflush(stdout);
        if (c.id == plan.coordinator) {
          coordinator_code = code;
          grace_end = clock_type::now() + plan.grace;
        } else if (code != 0 && plan.restart_on_failure && coordinator_code < 0 && !forwarded) {
          if (c.restarts >= plan.max_restarts) {
            std::printf("[launch] node %s: not restarted again (%d restarts)\n", c.id.c_str(),
                        c.restarts);
          } else {
            if (c.fd >= 0) { // what the dead process still had in its pipe
              drain(c);
              close(c.fd);
              c.fd = -1;
            }
            ++c.restarts;
            if (start(plan, c))
              std::printf("[launch] node %s: restarted (%d of at most %d), pid %d\n", c.id.c_str(),
                          c.restarts, plan.max_restarts, int(c.pid));
            else
              std::printf("[launch] node %s: cannot restart: %s\n", c.id.c_str(),
                          std::strerror(errno));
          }
        }
        std::fflush(stdout);
      }
    const bool any_running =
      std::any_of(cs.begin(), cs.end(), [](const child& c) { return c.running || c.fd >= 0; });
    if (!any_running)
      break;
    // The first signal goes to the coordinator alone, which stops the job
    // at a batch boundary and ends the other nodes (exit 0); they get the
    // grace once it has exited. A second signal, or none running the
    // coordinator, stops every node at once.
    const auto coord = std::find_if(cs.begin(), cs.end(), [&](const child& c) {
      return c.id == plan.coordinator && c.running;
    });
    if (interrupted && !forwarded) {
      forwarded = true;
      const int sig = last_signal ? int(last_signal) : SIGTERM;
      if (coord != cs.end()) {
        std::printf("[launch] %s: passed to the coordinator node %s, which stops the job (a "
                    "second signal stops every node)\n",
                    strsignal(sig), coord->id.c_str());
        kill(coord->pid, sig);
      } else {
        std::printf("[launch] %s: stopping every node\n", strsignal(sig));
        signal_all(cs, SIGTERM);
        stop_all = true;
      }
    }
    if (interrupted >= 2 && !stop_all) {
      std::printf("[launch] interrupted again: stopping every node\n");
      signal_all(cs, SIGTERM);
      stop_all = true;
    }
    if (stop_all && coordinator_code < 0)
      grace_end = clock_type::now();
    const auto now = clock_type::now();
    if ((coordinator_code >= 0 || stop_all) && !termed && now > grace_end) {
      signal_all(cs, SIGTERM);
      termed = true;
      kill_at = now + std::chrono::seconds(2);
    }
    if (termed && !killed && now > kill_at) {
      signal_all(cs, SIGKILL);
      killed = true;
    }
  }
  if (coordinator_code < 0)
    coordinator_code = 1;
  return coordinator_code;
}

std::size_t threads_per_node(std::size_t cores, std::size_t nodes) {
  return std::max<std::size_t>(1, cores / std::max<std::size_t>(1, nodes));
}

} // namespace runtime
