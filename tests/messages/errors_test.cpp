// The one mapping of caf::error onto the project's classes (messages/errors.hpp),
// as the worker, the syncer and the trainer use it.
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>
#include <doctest/doctest.h>

#include "messages/registry.hpp"

using messages::errc;

TEST_CASE("request_failure: CAF's timeout, the project's own code, else the peer's loss") {
  CHECK(messages::request_failure(caf::make_error(caf::sec::request_timeout), errc::shard_down) ==
        errc::request_timeout);
  // A peer gone: the class the caller names (a shard's or a trainer's loss).
  const auto gone = caf::make_error(caf::sec::request_receiver_down);
  CHECK(messages::request_failure(gone, errc::shard_down) == errc::shard_down);
  CHECK(messages::request_failure(gone, errc::trainer_down) == errc::trainer_down);
  // The peer's own error keeps its code, a request_timeout of ours included.
  CHECK(messages::request_failure(messages::make_error(errc::bad_request, "keys of shard 1"),
                                  errc::shard_down) == errc::bad_request);
  CHECK(messages::request_failure(messages::make_error(errc::io_error), errc::trainer_down) ==
        errc::io_error);
}

TEST_CASE("errc_of: only the project's errors keep their code") {
  CHECK(messages::errc_of(messages::make_error(errc::input_error, "x.tsv:3"),
                             errc::trainer_down) == errc::input_error);
  // An exit reason (kill) and CAF's timeout are the caller's class: a DOWN
  // with them is a lost child, not a timeout of its requests.
  CHECK(messages::errc_of(caf::make_error(caf::exit_reason::kill), errc::trainer_down) ==
        errc::trainer_down);
  CHECK(messages::errc_of(caf::make_error(caf::sec::request_timeout), errc::trainer_down) ==
        errc::trainer_down);
  CHECK(messages::is_project_error(messages::make_error(errc::node_taken)));
  CHECK_FALSE(messages::is_project_error(caf::make_error(caf::sec::request_timeout)));
}

TEST_CASE("error_text with a system: the context string, else CAF's rendering") {
  caf::actor_system_config cfg;
  messages::register_messages(cfg);
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system sys{cfg};
  CHECK(messages::error_text(messages::make_error(errc::io_error, "disk full"), sys) ==
        "disk full");
  CHECK(messages::error_text(caf::error{}, sys) == "no error");
  // No context string: the system renders it (CAF's renderer for sec).
  CHECK(messages::error_text(caf::make_error(caf::sec::request_timeout), sys) ==
        "system_error(request_timeout)");
  CHECK(messages::error_text(messages::make_error(errc::shard_down), sys) ==
        "shadowsync: shard_down");
}
