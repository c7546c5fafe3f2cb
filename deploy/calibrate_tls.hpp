#pragma once
// `shadowsync calibrate` over mutual TLS (sim.remote-tls-message-us,
// sim.remote-tls-gbps): sim/calibrate_remote.hpp's exchange between two
// actor systems on loopback, through CAF's OpenSSL module as the nodes of a
// multi-node run talk without deploy.insecure (deploy/node.cpp): the same
// wrappers (deploy/openssl_shim.hpp: read-ahead, no per-call signal
// masking), both sides authenticated. The certificate is made for the
// measurement (a self-signed P-256 one, its own CA) in a new temporary
// folder that is removed afterwards; nothing else is written.
#include <optional>
#include <string>

#include "sim/calibrate_remote.hpp"

namespace runtime {

// local_message_us: calibrate's local message cost (sim.message-us).
std::optional<std::string> measure_remote_tls(double local_message_us, remote_costs& out);

} // namespace runtime
