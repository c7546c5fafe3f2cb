#include "messages/errors.hpp"

#include <caf/actor_system.hpp>
#include <caf/sec.hpp>

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

namespace {

// The context string of a non-empty error, when it carries one.
const std::string* context_text(const caf::error& e) {
  const auto& ctx = e.context();
  if (ctx.size() >= 1 && ctx.match_element<std::string>(0))
    return &ctx.get_as<std::string>(0);
  return nullptr;
}

} // namespace

std::string error_text(const caf::error& e) {
  if (!e) // context() requires a non-empty error
    return "no error";
  if (const auto* text = context_text(e))
    return *text;
  if (is_project_error(e))
    return to_string(static_cast<errc>(e.code()));
  return "error " + std::to_string(e.code());
}

std::string error_text(const caf::error& e, const caf::actor_system& sys) {
  if (!e)
    return "no error";
  if (const auto* text = context_text(e))
    return *text;
  return sys.render(e);
}

errc errc_of(const caf::error& e, errc otherwise) {
  return is_project_error(e) ? static_cast<errc>(e.code()) : otherwise;
}

errc request_failure(const caf::error& e, errc lost) {
  if (e == caf::sec::request_timeout)
    return errc::request_timeout;
  return errc_of(e, lost);
}

} // namespace messages
