#pragma once
// `shadowsync calibrate`: the core time of a message between two nodes, on
// each side (sim/virtual_time.hpp, sim.remote-message-us and
// sim.remote-gbps). Two actor systems of this process, one scheduler thread
// each, exchange messages over loopback TCP through CAF's middleman: an
// embedding_rows message of 0 or 32768 floats, acknowledged, one at a time
// (as a lookup, its reply and a push cross between nodes: each wakes the
// receiving node's I/O and scheduler threads, whose wake-ups and idle
// polling take CPU), and again with 16 in flight (a stream: far less per
// message). The process's CPU time per message, medians of five rounds:
//   message-us  (CPU of a round trip of two small messages, less the two
//               handlers' local message cost) / 4: per message, each side
//   gbps        the payload's bytes / (the extra CPU of 128 KiB / 2): the
//               rate at which each side serialises and moves bytes
// The same over mutual TLS (sim.remote-tls-message-us, sim.remote-tls-gbps)
// takes a remote_link that loads CAF's OpenSSL module (deploy/calibrate_tls.hpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <caf/fwd.hpp>

namespace runtime {

struct remote_costs {
  double message_us = 0, gbps = 0;                   // one message at a time
  double streamed_message_us = 0, streamed_gbps = 0; // 16 in flight
};

// How the two actor systems reach each other. Each function returns an
// error text or nothing; publish listens on 127.0.0.1 and sets the port.
struct remote_link {
  std::function<void(caf::actor_system_config&)> configure; // more modules, settings
  std::function<std::optional<std::string>(caf::actor_system&, const caf::actor&,
                                           std::uint16_t& port)>
    publish;
  std::function<std::optional<std::string>(caf::actor_system&, std::uint16_t port,
                                           caf::actor& out)>
    connect;
};

// Plain TCP through CAF's middleman, as nodes with deploy.insecure talk.
remote_link plain_tcp_link();

// local_message_us: calibrate's local message cost (sim.message-us).
std::optional<std::string> measure_remote(double local_message_us, remote_costs& out,
                                          const remote_link& link = plain_tcp_link());

} // namespace runtime
