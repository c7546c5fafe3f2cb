#pragma once
// What a message weighs on the wire, for the simulated network
// (sim/network_model.hpp): a fixed header per message and per element,
// plus the raw bytes of every blob it carries. The exact encoding is CAF's
// binary serializer; the payload blobs dominate it, and counting them here is
// exact for them and cheap (no serialisation).
#include <cstdint>

#include <caf/fwd.hpp>

namespace messages {

constexpr std::uint64_t wire_header_bytes = 16;  // per message
constexpr std::uint64_t wire_element_bytes = 8;  // per element that is not a payload

std::uint64_t wire_bytes(const caf::type_erased_tuple& content);

} // namespace messages
