#pragma once
// The project's error category for failures between actors. Expected failures
// (a shard went down, a request timed out, a peer sent something malformed)
// travel as caf::error values of this category; broken invariants abort.
#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace caf {
class actor_system;
}

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
std::string error_text(const caf::error& e);
// The same for a log line, with the system's rendering of an error that
// carries no context string (CAF's own: "system_error(request_timeout)").
std::string error_text(const caf::error& e, const caf::actor_system& sys);

// The one mapping of a caf::error onto the project's classes:
//
// errc_of: one of the project's errors (make_error) keeps its own code;
// anything else (CAF's errors, an exit reason such as kill) is `otherwise`.
errc errc_of(const caf::error& e, errc otherwise);
// request_failure: the class of a failed request to a peer. CAF's
// request_timeout is request_timeout; otherwise errc_of(e, lost), where
// `lost` is the class of losing that peer (shard_down, trainer_down): CAF's
// request_receiver_down and any other error of CAF's.
errc request_failure(const caf::error& e, errc lost);
// Whether e is one of the project's errors.
inline bool is_project_error(const caf::error& e) { return e.category() == error_category; }

} // namespace messages
