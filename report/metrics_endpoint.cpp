#include "report/metrics_endpoint.hpp"

#include <cerrno>
#include <cstring>

#include <sys/socket.h>

#include <httplib.h>

#include "model/check.hpp"

namespace runtime {

std::unique_ptr<metrics_endpoint> metrics_endpoint::start(const std::string& address, int port,
                                                          const std::string& role,
                                                          const std::string& node,
                                                          std::string* err) {
  std::unique_ptr<metrics_endpoint> e(new metrics_endpoint);
  e->snap_.role = role;
  e->snap_.node = node;
  e->start_ = std::chrono::steady_clock::now();
  e->server_ = std::make_unique<httplib::Server>();
  // SO_REUSEADDR only: the library's default, SO_REUSEPORT, would let a
  // second process bind a port already in use and share its scrapes.
  e->server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  auto* self = e.get();
  // One worker thread answers scrapes (a Prometheus scrape is one request
  // at a time); the library's default starts max(8, cores - 1). The queue is
  // made once the server runs (cpp-httplib's listen sets it running first):
  // the signal start() waits for.
  e->server_->new_task_queue = [self] {
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      self->listening_ = true;
    }
    self->listening_cv_.notify_all();
    return new httplib::ThreadPool(1);
  };
  e->server_->Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
    res.set_content(self->render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  errno = 0;
  bool bound = false;
  if (port == 0) {
    e->port_ = e->server_->bind_to_any_port(address);
    bound = e->port_ > 0;
  } else {
    e->port_ = port;
    bound = e->server_->bind_to_port(address, port);
  }
  if (!bound) {
    const int code = errno;
    *err = "output.metrics-port = " + std::to_string(port) + ", output.metrics-address = " +
           address + ": cannot listen on " + address + ":" + std::to_string(port) +
           (code ? std::string(" (") + std::strerror(code) + ")"
                 : std::string(" (not a local address, or the port is taken)")) +
           "; expected a free port on an address of this machine";
    return nullptr;
  }
  e->thread_ = std::thread([self] { self->server_->listen_after_bind(); });
  // stop() before the thread marked the server running would be lost (and
  // the destructor's join would wait forever): wait for it.
  {
    std::unique_lock<std::mutex> lock(e->mu_);
    e->listening_cv_.wait(lock, [self] { return self->listening_; });
  }
  SS_CHECK(e->server_->is_running(), "the /metrics server runs before it makes its task queue");
  return e;
}

metrics_endpoint::~metrics_endpoint() {
  if (server_)
    server_->stop();
  if (thread_.joinable())
    thread_.join();
}

void metrics_endpoint::publish(const progress_sample& s) {
  const double wall =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  progress_sample copy = s; // (allocates outside the lock)
  std::lock_guard<std::mutex> lock(mu_);
  // The final sample (from run_metrics) has no bytes by shard: the last
  // polled ones stay.
  if (snap_.live && copy.shard_lookup_bytes.empty() && copy.shard_push_bytes.empty()) {
    copy.shard_lookup_bytes.swap(snap_.live->shard_lookup_bytes);
    copy.shard_push_bytes.swap(snap_.live->shard_push_bytes);
  }
  snap_.live = std::move(copy);
  snap_.live_wall_seconds = wall;
}

void metrics_endpoint::publish_final(const run_metrics& m) {
  std::lock_guard<std::mutex> lock(mu_);
  snap_.final_metrics = m;
}

std::string metrics_endpoint::render() const {
  metrics_snapshot copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    copy = snap_;
  }
  return prometheus_text(copy);
}

} // namespace runtime
