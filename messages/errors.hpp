#pragma once
// The project's error category for failures between actors. Expected failures
// (a shard went down, a request timed out, a peer sent something malformed)
// travel as caf::error values of this category; broken invariants abort.
#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace messages {

enum class errc : std::uint8_t {
  none = 0,
  shard_down,        // an embedding or dense shard terminated
  trainer_down,      // a trainer (or one of its workers/syncer) terminated
  request_timeout,   // a request got no answer within its timeout
  bad_request,       // malformed request: wrong sizes, keys of another shard
  protocol_mismatch, // a peer speaks another protocol version or layout
  input_error,       // reading or parsing the training data failed
  io_error,          // writing a checkpoint file failed
  node_taken,        // a node id already in the cluster (its old process not yet seen gone)
};

std::string to_string(errc x);

constexpr caf::atom_value error_category = caf::atom("shadowsyn");

inline caf::error make_error(errc x, std::string context = {}) {
  if (context.empty())
    return caf::error{static_cast<std::uint8_t>(x), error_category};
  return caf::error{static_cast<std::uint8_t>(x), error_category,
                    caf::make_message(std::move(context))};
}

// The error's text: its context string when it carries one (as make_error
// makes them), else the name of its code. Safe on any error, an empty
// context included, and an empty error ("no error").
inline std::string error_text(const caf::error& e) {
  if (!e) // context() requires a non-empty error
    return "no error";
  const auto& ctx = e.context();
  if (ctx.size() >= 1 && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  if (e.category() == error_category)
    return to_string(static_cast<errc>(e.code()));
  return "error " + std::to_string(e.code());
}

} // namespace messages
