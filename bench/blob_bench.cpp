// Dense-sync payload throughput between two processes on 127.0.0.1 through
// CAF's middleman: messages::float_blob (count, then one apply_raw) against a
// std::vector<float> in a struct (CAF 0.17 serialises it element by element),
// plain TCP and mutual TLS (certificates from scripts/make-certs.sh in a temp
// dir), serial round trips and a window of requests in flight.
//
// The binary re-executes itself with --serve: that process publishes an echo
// actor on port 0 and writes the bound port to a pipe; each request carries
// one payload and is answered with its element count (8 bytes). The server
// gets a quit message at the end and is killed if it lingers, or if this
// process dies (PR_SET_PDEATHSIG). Heartbeats stay at CAF's default (off) on
// both sides. MB/s = payload bytes (1e6) per second, one direction.
//
// usage: bench_blob [--repeats=5] [--sizes=1,16] [--depth=8] [--modes=plain,tls]
//                   [--payloads=blob,vector] [--volume=256] [--vector-volume=32]
//                   [--json=PATH] [--certs-script=PATH]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include "messages/registry.hpp"

namespace bench {
// The element-wise baseline: what a plain std::vector<float> costs on the wire.
struct float_vec {
  std::vector<float> values;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, float_vec& x) {
  return f(caf::meta::type_name("float_vec"), x.values);
}
using quit_atom = caf::atom_constant<caf::atom("bquit")>;
} // namespace bench

CAF_BEGIN_TYPE_ID_BLOCK(blob_bench, caf::first_custom_type_id + 200)
  CAF_ADD_TYPE_ID(blob_bench, (bench::float_vec))
CAF_END_TYPE_ID_BLOCK(blob_bench)

namespace {

using clock_type = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct options {
  int repeats = 5, depth = 8, port_fd = -1;
  std::vector<std::string> sizes{"1", "16"}, modes{"plain", "tls"}, payloads{"blob", "vector"};
  double volume = 256, vector_volume = 32; // MiB sent per repetition
  std::string json, certs_script = SS_SOURCE_DIR "/scripts/make-certs.sh", tls_dir;
  bool serve = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    out.push_back(x);
  return out;
}

double number(const std::string& s, const std::string& where) {
  try {
    return std::stod(s);
  } catch (const std::logic_error&) {
    throw std::invalid_argument("bad number '" + s + "' in " + where);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Both sides: project types, the bench's vector type, middleman, TLS files.
void configure(caf::actor_system_config& cfg, const std::string& tls_dir, const char* node) {
  messages::register_messages(cfg);
  cfg.add_message_types<caf::id_block::blob_bench>();
  cfg.load<caf::io::middleman>();
  if (!tls_dir.empty()) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = tls_dir + "/" + node + ".pem";
    cfg.openssl_key = tls_dir + "/" + node + ".key";
    cfg.openssl_cafile = tls_dir + "/ca.pem";
  }
}

caf::behavior echo_server(caf::event_based_actor* self) {
  return {
    [](const messages::float_blob& b) { return static_cast<std::uint64_t>(b.size()); },
    [](const bench::float_vec& v) { return static_cast<std::uint64_t>(v.values.size()); },
    [=](bench::quit_atom q) { return self->quit(), q; },
  };
}

int serve(const options& o) {
  caf::actor_system_config cfg;
  configure(cfg, o.tls_dir, "server");
  caf::actor_system sys{cfg};
  auto srv = sys.spawn(echo_server);
  auto port = o.tls_dir.empty() ? sys.middleman().publish(srv, 0, "127.0.0.1", true)
                                : caf::openssl::publish(srv, 0, "127.0.0.1", true);
  if (!port) {
    std::fprintf(stderr, "bench_blob server: publish failed: %s\n",
                 sys.render(port.error()).c_str());
    caf::anon_send_exit(srv, caf::exit_reason::user_shutdown);
    return 1;
  }
  dprintf(o.port_fd, "%u\n", static_cast<unsigned>(*port));
  close(o.port_fd);
  return 0; // ~actor_system waits until the client's quit stops srv
}

// Client side: `count` requests, at most `depth` in flight; the driver sends
// the elapsed seconds, or the first error, to `client`.
struct measurement {
  caf::actor server, client;
  caf::message payload;
  std::uint64_t expect = 0, count = 0, depth = 0, sent = 0, received = 0;
  clock_type::time_point start = clock_type::now();
};
using driver_actor = caf::stateful_actor<measurement>;

void send_next(driver_actor* self) {
  auto& m = self->state;
  ++m.sent;
  self->request(m.server, std::chrono::seconds(120), m.payload)
    .then(
      [=](std::uint64_t n) {
        auto& m = self->state;
        if (n != m.expect)
          self->send(m.client, caf::make_error(caf::sec::invalid_argument, "echo size mismatch"));
        else if (++m.received == m.count)
          self->send(m.client, std::chrono::duration<double>(clock_type::now() - m.start).count());
        else if (m.sent < m.count)
          return send_next(self);
        else
          return;
        self->quit();
      },
      [=](caf::error& err) {
        self->send(self->state.client, std::move(err));
        self->quit();
      });
}

caf::behavior driver(driver_actor* self, measurement m) {
  self->state = std::move(m);
  while (self->state.sent < std::min(self->state.depth, self->state.count))
    send_next(self);
  return {[](caf::unit_t) {}}; // only responses from here on
}

// The --serve child: stop() waits up to grace_ms for a clean exit, then SIGKILLs.
struct server_process {
  pid_t pid = -1;
  std::uint16_t port = 0;
  ~server_process() { stop(0); }
  void stop(int grace_ms) {
    for (int waited = 0; pid > 0 && waited < grace_ms; waited += 10)
      waitpid(pid, nullptr, WNOHANG) == pid ? pid = -1 : usleep(10000);
    if (pid > 0 && kill(pid, SIGKILL) == 0)
      waitpid(pid, nullptr, 0);
    pid = -1;
  }
};

// Fork and exec this binary with --serve; read the published port back.
bool start_server(server_process& sp, const std::string& tls_dir) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return false;
  char exe[4096] = {}; // the real path, so the child's process name is bench_blob too
  if (readlink("/proc/self/exe", exe, sizeof exe - 1) <= 0)
    return false;
  const pid_t parent = getpid();
  sp.pid = fork();
  if (sp.pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(1);
    close(fds[0]);
    fcntl(fds[1], F_SETFD, 0); // keep the write end across exec
    std::string fd_arg = "--port-fd=" + std::to_string(fds[1]), tls_arg = "--tls-dir=" + tls_dir;
    execl(exe, "bench_blob", "--serve", fd_arg.c_str(), tls_arg.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  char buf[32] = {};
  pollfd pfd{fds[0], POLLIN, 0};
  for (std::size_t len = 0; sp.pid > 0 && len + 1 < sizeof buf && poll(&pfd, 1, 30000) > 0;) {
    const ssize_t n = read(fds[0], buf + len, sizeof buf - 1 - len);
    if (n <= 0)
      break;
    len += static_cast<std::size_t>(n);
  }
  close(fds[0]);
  sp.port = static_cast<std::uint16_t>(std::atoi(buf));
  return sp.pid > 0 && sp.port != 0;
}

struct result {
  std::string mode, payload;
  double mib;
  std::uint64_t depth, count;
  std::vector<double> mbps;
};

caf::message make_payload(const std::string& kind, std::size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v)
    x = dist(rng);
  if (kind == "blob")
    return caf::make_message(messages::float_blob(std::move(v)));
  return caf::make_message(bench::float_vec{std::move(v)});
}

// One mode: a fresh server process, then every payload x size x pattern.
bool run_mode(const options& o, const std::string& mode, const std::string& tls_dir,
              std::vector<result>& out) {
  server_process sp;
  if (!start_server(sp, tls_dir)) {
    std::fprintf(stderr, "bench_blob: the %s server did not report a port\n", mode.c_str());
    return false;
  }
  caf::actor_system_config cfg;
  configure(cfg, tls_dir, "client");
  caf::actor_system sys{cfg};
  auto server = tls_dir.empty() ? sys.middleman().remote_actor("127.0.0.1", sp.port)
                                : caf::openssl::remote_actor(sys, "127.0.0.1", sp.port);
  if (!server) {
    std::fprintf(stderr, "bench_blob: %s connect to port %u failed: %s\n", mode.c_str(),
                 static_cast<unsigned>(sp.port), sys.render(server.error()).c_str());
    return false;
  }
  caf::scoped_actor self{sys};
  auto measure = [&](const caf::message& msg, std::uint64_t n, std::uint64_t count,
                     std::uint64_t depth) {
    double secs = -1;
    sys.spawn(driver, measurement{*server, self, msg, n, count, depth});
    self->receive([&](double s) { secs = s; },
                  [&](caf::error& e) { std::fprintf(stderr, "%s\n", sys.render(e).c_str()); });
    return secs;
  };
  bool ok = true;
  for (std::size_t i = 0; ok && i < o.payloads.size() * o.sizes.size(); ++i) {
    const std::string& kind = o.payloads[i / o.sizes.size()];
    const double mib = std::stod(o.sizes[i % o.sizes.size()]);
    const auto n = static_cast<std::size_t>(mib * 1024 * 1024 / sizeof(float));
    const auto msg = make_payload(kind, n);
    const double volume = kind == "blob" ? o.volume : o.vector_volume;
    for (std::uint64_t depth : {std::uint64_t{1}, static_cast<std::uint64_t>(o.depth)}) {
      const auto count = std::max({depth, std::uint64_t{2}, std::uint64_t(volume / mib)});
      result r{mode, kind, mib, depth, count, {}};
      ok = ok && measure(msg, n, depth, depth) > 0; // warm-up
      for (int rep = 0; ok && rep < o.repeats; ++rep) {
        const double secs = measure(msg, n, count, depth);
        if ((ok = secs > 0))
          r.mbps.push_back(static_cast<double>(n * sizeof(float)) * count / secs / 1e6);
      }
      if (ok)
        out.push_back(std::move(r));
    }
  }
  self->request(*server, std::chrono::seconds(10), bench::quit_atom::value)
    .receive([](bench::quit_atom) {}, [](caf::error&) {});
  sp.stop(10000);
  return ok;
}

// Markdown table on stdout; with --json, the samples too.
void report(const options& o, const std::vector<result>& rs) {
  auto vector_median = [&](const result& b) {
    for (const auto& r : rs)
      if (r.payload == "vector" && r.mode == b.mode && r.mib == b.mib && r.depth == b.depth)
        return median(r.mbps);
    return 0.0;
  };
  std::printf("| mode | payload | size | pattern | msgs/rep | MB/s median (min-max) | vs vector |\n"
              "|---|---|---|---|---|---|---|\n");
  std::string json = "[\n";
  for (const auto& r : rs) {
    const double med = median(r.mbps), vec = vector_median(r);
    const auto [lo, hi] = std::minmax_element(r.mbps.begin(), r.mbps.end());
    const std::string pattern = r.depth == 1 ? "serial" : "pipelined " + std::to_string(r.depth);
    char ratio[32] = "-", line[512];
    if (r.payload == "blob" && vec > 0)
      std::snprintf(ratio, sizeof ratio, "%.1fx", med / vec);
    std::printf("| %s | %s | %g MiB | %s | %llu | %.1f (%.1f-%.1f) | %s |\n", r.mode.c_str(),
                r.payload == "blob" ? "float_blob" : "vector<float>", r.mib, pattern.c_str(),
                static_cast<unsigned long long>(r.count), med, *lo, *hi, ratio);
    std::snprintf(line, sizeof line,
                  " {\"mode\": \"%s\", \"payload\": \"%s\", \"size_mib\": %g, \"depth\": %llu, "
                  "\"messages_per_rep\": %llu, \"median_mb_per_s\": %.1f, \"mb_per_s\": [",
                  r.mode.c_str(), r.payload.c_str(), r.mib, (unsigned long long)r.depth,
                  (unsigned long long)r.count, med);
    json += line;
    for (std::size_t i = 0; i < r.mbps.size(); ++i)
      json += (i ? ", " : "") + std::to_string(r.mbps[i]);
    json += &r == &rs.back() ? "]}\n" : "]},\n";
  }
  if (o.json.empty())
    return;
  FILE* f = std::fopen(o.json.c_str(), "w");
  if (!f || std::fputs((json + "]\n").c_str(), f) < 0 || std::fclose(f) != 0)
    std::fprintf(stderr, "bench_blob: cannot write %s\n", o.json.c_str());
}

} // namespace

int main(int argc, char** argv) try {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq), val = eq == arg.npos ? "" : arg.substr(eq + 1);
    if (key == "--serve") o.serve = true;
    else if (key == "--port-fd") o.port_fd = int(number(val, arg));
    else if (key == "--tls-dir") o.tls_dir = val;
    else if (key == "--repeats") o.repeats = std::max(1, int(number(val, arg)));
    else if (key == "--depth") o.depth = std::max(2, int(number(val, arg)));
    else if (key == "--sizes") o.sizes = split(val);
    else if (key == "--modes") o.modes = split(val);
    else if (key == "--payloads") o.payloads = split(val);
    else if (key == "--volume") o.volume = number(val, arg);
    else if (key == "--vector-volume") o.vector_volume = number(val, arg);
    else if (key == "--json") o.json = val;
    else if (key == "--certs-script") o.certs_script = val;
    else
      throw std::invalid_argument(key == "--help" ? "" : "unknown option " + key);
  }
  for (const auto& m : o.modes)
    if (m != "plain" && m != "tls")
      throw std::invalid_argument("unknown mode " + m);
  for (const auto& p : o.payloads)
    if (p != "blob" && p != "vector")
      throw std::invalid_argument("unknown payload " + p);
  for (const auto& s : o.sizes)
    if (!(number(s, "--sizes") > 0))
      throw std::invalid_argument("--sizes must be positive MiB");
  if (o.serve)
    return serve(o);
  char tmpl[] = "/tmp/bench_blob.XXXXXX";
  if (!mkdtemp(tmpl))
    return std::perror("bench_blob: mkdtemp"), 1;
  const std::string tmp = tmpl;
  struct remove_dir {
    std::string dir;
    ~remove_dir() { std::error_code ec; fs::remove_all(dir, ec); }
  } cleanup{tmp};
  if (std::find(o.modes.begin(), o.modes.end(), "tls") != o.modes.end()) {
    const std::string cmd = "bash '" + o.certs_script + "' '" + tmp + "' server client > /dev/null";
    if (std::system(cmd.c_str()) != 0)
      return std::fprintf(stderr, "bench_blob: %s failed\n", cmd.c_str()), 1;
  }
  std::vector<result> rs;
  for (const auto& mode : o.modes)
    if (!run_mode(o, mode, mode == "tls" ? tmp : "", rs))
      return 1;
  report(o, rs);
  return 0;
} catch (const std::invalid_argument& e) {
  std::fprintf(*e.what() ? stderr : stdout,
               "%s%susage: bench_blob [--repeats=5] [--sizes=1,16] [--depth=8] [--modes=plain,tls]"
               " [--payloads=blob,vector] [--volume=256] [--vector-volume=32] [--json=PATH]"
               " [--certs-script=PATH]\n",
               e.what(), *e.what() ? "\n" : "");
  return *e.what() ? 2 : 0;
}
