#include "messages/errors.hpp"

namespace messages {

std::string to_string(errc x) {
  switch (x) {
    case errc::none: return "none";
    case errc::shard_down: return "shard_down";
    case errc::trainer_down: return "trainer_down";
    case errc::request_timeout: return "request_timeout";
    case errc::bad_request: return "bad_request";
    case errc::protocol_mismatch: return "protocol_mismatch";
    case errc::input_error: return "input_error";
    case errc::io_error: return "io_error";
    case errc::node_taken: return "node_taken";
  }
  return "unknown";
}

} // namespace messages
