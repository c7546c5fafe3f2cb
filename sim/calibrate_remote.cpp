// `shadowsync calibrate`: the core time of messages between two nodes
// (sim.remote-message-us, sim.remote-gbps), measured between two actor
// systems of this process over loopback TCP through CAF's middleman, as the
// nodes of a multi-node run talk (plain TCP; deploy/node.cpp).
#include "sim/calibrate_remote.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/cpu_time.hpp"
#include "messages/registry.hpp"

namespace runtime {

namespace {

// The receiving node's actor: acknowledges every batch of rows.
caf::behavior sink(caf::event_based_actor*) {
  return {[](const messages::embedding_rows& r) { return r.batch; }};
}

// The sending node's actor: keeps `window` messages in flight to `peer`
// until `count` have been acknowledged.
struct driver_state {
  std::uint64_t sent = 0, acked = 0, count = 0, window = 1;
  std::size_t floats = 0;
  caf::response_promise done;
};

caf::behavior driver(caf::stateful_actor<driver_state>* self, caf::actor peer) {
  auto send_one = [self, peer] {
    messages::embedding_rows r;
    r.batch = self->state.sent++;
    r.rows.values.assign(self->state.floats, 0.5f);
    self->send(peer, std::move(r));
  };
  return {
    [self, send_one](messages::start_atom, std::uint64_t count, std::uint64_t floats,
                     std::uint64_t window) {
      auto& st = self->state;
      st = driver_state{};
      st.count = count;
      st.floats = std::size_t(floats);
      st.window = window;
      st.done = self->make_response_promise();
      while (st.sent < std::min(count, window))
        send_one();
      return st.done;
    },
    [self, send_one](std::uint64_t) {
      auto& st = self->state;
      if (++st.acked == st.count)
        st.done.deliver(messages::done_atom::value);
      else if (st.sent < st.count)
        send_one();
    },
  };
}

void configure(caf::actor_system_config& cfg) {
  messages::register_messages(cfg);
  cfg.load<caf::io::middleman>();
  cfg.set("scheduler.max-threads", 1);
  cfg.set("middleman.app-identifiers", std::vector<std::string>{"shadowsync-calibrate"});
}

} // namespace

remote_link plain_tcp_link() {
  remote_link l;
  l.configure = [](caf::actor_system_config&) {};
  l.publish = [](caf::actor_system& sys, const caf::actor& a,
                 std::uint16_t& port) -> std::optional<std::string> {
    auto p = sys.middleman().publish(a, 0, "127.0.0.1", true);
    if (!p)
      return "calibrate: cannot listen on 127.0.0.1: " + sys.render(p.error());
    port = *p;
    return std::nullopt;
  };
  l.connect = [](caf::actor_system& sys, std::uint16_t port,
                 caf::actor& out) -> std::optional<std::string> {
    auto p = sys.middleman().remote_actor("127.0.0.1", port);
    if (!p)
      return "calibrate: cannot connect to 127.0.0.1:" + std::to_string(port) + ": " +
             sys.render(p.error());
    out = *p;
    return std::nullopt;
  };
  return l;
}

std::optional<std::string> measure_remote(double local_message_us, remote_costs& out,
                                          const remote_link& link) {
  caf::actor_system_config ca, cb;
  configure(ca);
  configure(cb);
  link.configure(ca);
  link.configure(cb);
  caf::actor_system a{ca}, b{cb};
  auto receiver = a.spawn(sink);
  std::uint16_t port = 0;
  if (auto e = link.publish(a, receiver, port)) {
    anon_send_exit(receiver, caf::exit_reason::user_shutdown);
    return e;
  }
  caf::actor proxy;
  if (auto e = link.connect(b, port, proxy)) {
    anon_send_exit(receiver, caf::exit_reason::user_shutdown);
    return e;
  }
  auto sender = b.spawn(driver, proxy);
  caf::scoped_actor self{b};
  // Process CPU seconds per message of `floats` floats (and its tiny ack).
  bool failed = false;
  auto round = [&](std::uint64_t count, std::uint64_t floats, std::uint64_t window) {
    const double c0 = actors::process_cpu_seconds();
    bool ok = false;
    self->request(sender, caf::infinite, messages::start_atom::value, count, floats, window)
      .receive([&](messages::done_atom) { ok = true; }, [](caf::error&) {});
    failed = failed || !ok;
    return (actors::process_cpu_seconds() - c0) / double(count);
  };
  const std::uint64_t big = 32768; // 128 KiB: about a batch's lookup reply or push
  round(200, 0, 1);                // warm-up: connections, allocations
  round(50, big, 1);
  auto per_side = [&](std::uint64_t window, double& us, double& gbps) {
    std::vector<double> small_s, big_s;
    for (int i = 0; i < 5; ++i) {
      small_s.push_back(round(2000, 0, window));
      big_s.push_back(round(200, big, window));
    }
    std::sort(small_s.begin(), small_s.end());
    std::sort(big_s.begin(), big_s.end());
    // A round trip is two small messages (the rows' header and the ack),
    // each with two sides, and two handlers (sim.message-us charges those).
    us = std::max(0.0, 1e6 * (small_s[2] - 2.0 * local_message_us * 1e-6) / 4.0);
    // The payload's bytes cross once, each side paying for them.
    const double per_byte_side = (big_s[2] - small_s[2]) / (2.0 * 4.0 * double(big));
    gbps = per_byte_side > 0 ? 1e-9 / per_byte_side : 0.0;
  };
  per_side(1, out.message_us, out.gbps);
  per_side(16, out.streamed_message_us, out.streamed_gbps);
  self->send_exit(sender, caf::exit_reason::user_shutdown);
  anon_send_exit(receiver, caf::exit_reason::user_shutdown);
  if (failed)
    return std::string("calibrate: the loopback message exchange failed");
  return std::nullopt;
}

} // namespace runtime
