#pragma once
// The live /metrics endpoint (output.metrics-port; DESIGN.md section 17): an
// HTTP server (cpp-httplib) on its own threads that answers GET /metrics
// with report/metrics_page.hpp's text of the latest published snapshot.
//
// Thread safety: publish() and publish_final() may be called from any one
// thread (the progress path: the coordinator's caller, or the sequential
// loop); they copy the values under a mutex and return. The server threads
// only read that copy under the same mutex and render outside it: a scrape
// never sends to, waits on or runs in an actor, and a slow client holds no
// lock the training side takes. Other paths answer 404.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "report/metrics_page.hpp"

namespace httplib {
class Server;
}

namespace runtime {

class metrics_endpoint {
public:
  // Listens on address:port (port > 0) and serves from a thread of its own.
  // Null with *err set when the address cannot be bound (in use, not a local
  // address, not an address); the message names output.metrics-port and
  // output.metrics-address. `role` and `node` label every sample.
  static std::unique_ptr<metrics_endpoint> start(const std::string& address, int port,
                                                 const std::string& role, const std::string& node,
                                                 std::string* err);
  ~metrics_endpoint(); // stops the server and joins its thread

  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

  // The latest progress sample; its wall time is taken here (seconds since
  // start()).
  void publish(const progress_sample& s);
  // The finished run's metrics (eval, bytes by kind, checkpoints, failures).
  void publish_final(const run_metrics& m);

  // The page as a scrape would get it now.
  std::string render() const;
  int port() const { return port_; }

private:
  metrics_endpoint() = default;
  mutable std::mutex mu_;
  metrics_snapshot snap_;                       // guarded by mu_
  bool listening_ = false;                      // guarded by mu_: the server runs
  std::condition_variable listening_cv_;        // notified when listening_ is set
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

} // namespace runtime
