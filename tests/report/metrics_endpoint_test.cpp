// The /metrics endpoint (report/metrics_endpoint.hpp) over real loopback
// HTTP: what it serves, what it refuses, and a port already taken.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "report/metrics_endpoint.hpp"

using namespace runtime;

namespace {

// One HTTP/1.0 GET of `path` on 127.0.0.1:port; the whole response.
std::string http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(std::uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(::write(fd, req.data(), req.size()) == ssize_t(req.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, std::size_t(n));
  ::close(fd);
  return out;
}

} // namespace

TEST_CASE("metrics endpoint: serves the latest published sample, 404 elsewhere") {
  std::string err;
  auto e = metrics_endpoint::start("127.0.0.1", 0, "coordinator", "", &err); // 0: any free port
  REQUIRE_MESSAGE(e, err);
  CHECK(e->port() > 0);
  progress_sample p;
  p.examples = 42;
  e->publish(p);
  auto r = http_get(e->port(), "/metrics");
  CHECK(r.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(r.find("text/plain; version=0.0.4") != std::string::npos);
  CHECK(r.find("\nshadowsync_examples_total{role=\"coordinator\"} 42\n") != std::string::npos);
  p.examples = 43; // a later sample replaces it
  e->publish(p);
  CHECK(http_get(e->port(), "/metrics").find("examples_total{role=\"coordinator\"} 43\n") !=
        std::string::npos);
  CHECK(http_get(e->port(), "/other").rfind("HTTP/1.1 404", 0) == 0);
}

TEST_CASE("metrics endpoint: a port in use and a bad address are refused, naming the options") {
  std::string err;
  auto first = metrics_endpoint::start("127.0.0.1", 0, "coordinator", "", &err);
  REQUIRE_MESSAGE(first, err);
  auto second = metrics_endpoint::start("127.0.0.1", first->port(), "coordinator", "", &err);
  CHECK(!second);
  CHECK(err.find("output.metrics-port = " + std::to_string(first->port())) != std::string::npos);
  CHECK(err.find("Address already in use") != std::string::npos);
  err.clear();
  CHECK(!metrics_endpoint::start("256.0.0.1", 0, "coordinator", "", &err)); // not an address
  CHECK(err.find("output.metrics-address = 256.0.0.1") != std::string::npos);
}

TEST_CASE("metrics endpoint: the final sample keeps the last polled bytes by shard") {
  std::string err;
  auto e = metrics_endpoint::start("127.0.0.1", 0, "coordinator", "", &err);
  REQUIRE_MESSAGE(e, err);
  progress_sample p;
  p.examples = 10;
  p.shard_lookup_bytes = {5, 6};
  p.shard_push_bytes = {7, 8};
  e->publish(p);
  progress_sample fin; // as final_sample() builds it: no breakdown by shard
  fin.examples = 12;
  e->publish(fin);
  const auto page = e->render();
  CHECK(page.find("examples_total{role=\"coordinator\"} 12\n") != std::string::npos);
  CHECK(page.find("shadowsync_shard_bytes_total{role=\"coordinator\",shard=\"1\",kind=\"push\"} 8\n") !=
        std::string::npos);
}
