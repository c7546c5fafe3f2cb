// An embedding shard's CPR saves on scheduler threads (the wall clock): the
// rows are copied in the handler and a thread writes them, so a store that
// stalls does not stall lookups (actors/embedding_shard_cpr.hpp).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/embedding_shard.hpp"
#include "checkpoint/cpr_files.hpp"
#include "messages/messages.hpp"
#include "messages/registry.hpp"
#include "shard_config.hpp"
#include "tests/actors/eventually.hpp"

namespace {

using namespace std::chrono_literals;

using test::eventually;

} // namespace

TEST_CASE("cpr shard on threads: a save stalled in its store leaves lookups answered; the "
          "failed save is counted and the next one lands") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ss-cpr-bg-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string folder = (dir / "embedding-1").string();
  fs::create_directories(folder);
  // The first save's file is a FIFO: its writer stalls in open() until a
  // reader comes, as on a store that hangs; its fsync then fails.
  const std::string first = folder + "/00000000.bin";
  REQUIRE(::mkfifo(first.c_str(), 0600) == 0);

  caf::actor_system_config cfg;
  messages::register_messages(cfg);
  caf::actor_system sys{cfg};
  auto c = test::small_shard_config();
  c.cpr.folder = folder;
  c.cpr.save_at_start = true; // a full save at once
  c.cpr.interval = std::chrono::milliseconds(20);
  auto counters = std::make_shared<actors::cpr_counters>();
  c.cpr.counters = counters;
  auto shard = sys.spawn(actors::embedding_shard, c);
  caf::scoped_actor self{sys};

  // The spawn function runs at the shard's first scheduling, behind what is
  // in its mailbox: one lookup answered puts the start's save next.
  messages::lookup_request req;
  req.batch = 1;
  req.keys.values = {1, 4};
  self->request(shard, 3s, messages::lookup_atom::value, req)
    .receive([](messages::embedding_rows&) {},
             [&](caf::error& e) { FAIL("no first lookup reply: " << sys.render(e)); });
  // Behind the save: a lookup, answered while the save stalls.
  bool answered = false;
  self->request(shard, 3s, messages::lookup_atom::value, req)
    .receive([&](messages::embedding_rows& r) { answered = r.rows.size() == 2 * 4; },
             [&](caf::error& e) { FAIL_CHECK("no lookup reply: " << sys.render(e)); });
  CHECK(answered);
  CHECK(counters->saves == 0);
  CHECK(counters->failed_saves == 0);

  // The store wakes: the writer's open returns, its fsync of a FIFO fails.
  const int fd = ::open(first.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  char buf[4096];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
  ::close(fd);
  CHECK(eventually([&] { return counters->failed_saves == 1; }));
  CHECK(counters->saves == 0);

  // A push arms the timer; the next save (full: the failed base left the
  // policy with none) lands as a regular file.
  messages::embedding_grads g;
  g.keys.values = {1};
  g.grads.values = {0.5f, 0.5f, 0.5f, 0.5f};
  self->send(shard, messages::push_atom::value, g);
  CHECK(eventually([&] { return counters->saves >= 1; }));
  CHECK(counters->failed_saves == 1);
  CHECK(fs::is_regular_file(first));

  self->send_exit(shard, caf::exit_reason::user_shutdown);
  self->wait_for(shard);
  fs::remove_all(dir);
}
