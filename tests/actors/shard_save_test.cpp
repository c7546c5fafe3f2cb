// embedding_shard's save(FOLDER) (actors/embedding_shard_save.cpp) under the
// deterministic scheduler, where threads may send: the file is written by a
// thread, not within the handler. The shard serves a push while the writer
// is held at the file's open (the file is a FIFO that the test opens for
// reading only once the push is applied); the reply waits for the writer;
// the bytes are those of the rows at the request. An unwritable folder's
// error names the file.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "actors/embedding_shard.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/model_files.hpp"
#include "tests/actors/shard_config.hpp"
#include "tests/actors/shard_save.hpp"
#include "tests/actors/test_fixture.hpp"

using namespace messages;
using actors::embedding_shard;
namespace fs = std::filesystem;

namespace {

using test::bytes_of;

// Reads the FIFO at `path` to its end once go() is called (or after 5 s, so
// that a save written within the handler, which blocks the test thread at
// the FIFO's open, still ends and the test fails instead of hanging).
struct fifo_reader {
  explicit fifo_reader(const fs::path& path) {
    REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
    thread = std::thread([this, path] {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!started && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      got = bytes_of(path); // blocks until the writer has opened it
    });
  }
  void go() { started = true; }
  std::string finish() {
    go();
    if (thread.joinable())
      thread.join();
    return got;
  }
  ~fifo_reader() { finish(); }
  std::atomic<bool> started{false};
  std::string got;
  std::thread thread;
};

// A fresh folder under the temp dir.
fs::path fresh(const std::string& name) {
  const auto p = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// A small shard of hashed or dynamic tables, started.
actors::embedding_shard_actor spawn_small_shard(test::actor_fixture& f, bool dynamic) {
  auto shard = f.sys.spawn(embedding_shard, dynamic ? test::small_dynamic_shard_config()
                                                    : test::small_shard_config());
  f.run();
  return shard;
}

// Sends save(folder) and runs the shard until its writer thread holds the
// save (at the FIFO's open): the handler has returned without a reply, and
// one save is in flight. (Written within the handler, the reply would be in.)
std::shared_ptr<test::reply_slot<test::saved_file>>
held_save(test::actor_fixture& f, const actors::embedding_shard_actor& shard,
          const fs::path& folder) {
  auto& st = test::shard_state(shard);
  auto saved = test::save_async(f, shard, folder.string());
  while (!saved->done() && st.saves.empty() && f.run_once()) {
  }
  REQUIRE_FALSE(saved->done());
  REQUIRE(st.saves.size() == 1);
  return saved;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: save(FOLDER) is written by a thread from the rows at the "
                  "request, while a push is applied") {
  auto shard = sys.spawn(embedding_shard, test::small_shard_config());
  run();
  auto& st = test::shard_state(shard);
  const auto base = fresh("ss_shard_save_test");
  fs::create_directories(base / "want");
  fs::create_directories(base / "save");
  // The file of the rows now, as the handler used to write it.
  checkpoint::file_info want_info;
  std::string err;
  REQUIRE(checkpoint::write_embedding_file(
    (base / "want").string(),
    checkpoint::shard_view(*st.tables, st.cfg.rows_per_table, st.cfg.shard, st.cfg.num_shards),
    &want_info, &err));
  const auto want = bytes_of(base / "want" / "embedding-1.bin");
  auto before = request<float_blob>(shard, dump_atom::value);
  REQUIRE(before);
  // The writer blocks at the open of the FIFO until the reader goes.
  fifo_reader fifo(base / "save" / "embedding-1.bin");
  // The save's handler returns without a reply: a thread writes.
  auto saved = held_save(*this, shard, base / "save");
  // The shard goes on: a push to row 4 (shard 1's local row 1 of table 0)
  // is applied while the writer waits (it sends nothing before it is done,
  // so the scheduler may run).
  embedding_grads g;
  g.keys.values = {4};
  g.grads.values.assign(4, 1.0f);
  self->send(shard, push_atom::value, g);
  run();
  CHECK_FALSE(saved->done());
  auto after = request<float_blob>(shard, dump_atom::value);
  REQUIRE(after);
  CHECK(after->values != before->values);
  // The bytes written are the rows at the request, not after the push.
  const auto got = fifo.finish();
  CHECK(got.size() == want.size());
  CHECK(got == want);
  test::join_saves(shard);
  run();
  REQUIRE(saved->done());
  CHECK(st.saves.empty());
  // A FIFO cannot be fsynced: the writer's error reaches the requester,
  // naming the shard and the file.
  auto r = saved->get();
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::io_error);
  const auto why = context_of(r.error());
  CHECK(why.find("embedding-shard-1") != std::string::npos);
  CHECK(why.find("embedding-1.bin") != std::string::npos);
  CHECK(why.find("fsync") != std::string::npos);
  // A plain folder: the reply names the file with its size and CRC32C.
  fs::remove(base / "save" / "embedding-1.bin");
  auto ok = test::save(*this, shard, (base / "save").string());
  REQUIRE(ok);
  CHECK(ok->name == "embedding-1.bin");
  CHECK(ok->bytes == fs::file_size(base / "save" / "embedding-1.bin"));
  CHECK(ok->bytes == want_info.bytes);
  CHECK(ok->crc32c != want_info.crc32c); // the push is in this one
  fs::remove_all(base);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: save(FOLDER) into a missing folder replies io_error naming "
                  "the file, hashed and dynamic tables") {
  const auto base = fresh("ss_shard_save_missing");
  for (const bool dynamic : {false, true}) {
    CAPTURE(dynamic);
    auto shard = spawn_small_shard(*this, dynamic);
    auto r = test::save(*this, shard, (base / "missing").string());
    REQUIRE_FALSE(r);
    CHECK(code_of(r.error()) == errc::io_error);
    const auto why = context_of(r.error());
    CHECK(why.find("embedding-shard-1") != std::string::npos);
    CHECK(why.find(base.string() + "/missing/" + (dynamic ? "dynamic-1.bin" : "embedding-1.bin")) !=
          std::string::npos);
    CHECK(test::shard_state(shard).saves.empty());
    self->send_exit(shard, caf::exit_reason::user_shutdown);
    run();
  }
  fs::remove_all(base);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard, dynamic tables: save(FOLDER) is written by a thread from a "
                  "copy of the tables at the request, while a push is applied") {
  const auto one = test::one_row_dynamic_shard();
  const std::uint64_t a = one.id;
  const auto& w = one.w;
  auto shard = sys.spawn(embedding_shard, one.cfg);
  run();
  auto& st = test::shard_state(shard);
  const auto base = fresh("ss_shard_save_dynamic");
  fs::create_directories(base / "want");
  fs::create_directories(base / "save");
  checkpoint::file_info want_info;
  std::string err;
  REQUIRE(checkpoint::write_dynamic_file((base / "want" / "dynamic-1.bin").string(), *st.dyn,
                                        st.cfg.shard, st.cfg.num_shards,
                                        checkpoint::dynamic_counters::own_shard, &want_info,
                                        &err));
  const auto want = bytes_of(base / "want" / "dynamic-1.bin");
  fifo_reader fifo(base / "save" / "dynamic-1.bin");
  auto saved = held_save(*this, shard, base / "save");
  embedding_grads g;
  g.keys.values = {0, a};
  g.grads.values = {1, 1, 1, 1};
  self->send(shard, push_atom::value, g);
  run();
  auto d = request<embedding_grads>(shard, dump_atom::value, ids_atom::value);
  REQUIRE(d);
  REQUIRE(d->keys.values == std::vector<std::uint64_t>{0, a});
  CHECK(std::vector<float>(d->grads.values.begin(), d->grads.values.begin() + 4) != w);
  const auto got = fifo.finish();
  CHECK(got == want);
  test::join_saves(shard);
  run();
  REQUIRE(saved->done());
  auto r = saved->get();
  REQUIRE_FALSE(r); // a FIFO cannot be fsynced
  CHECK(context_of(r.error()).find("dynamic-1.bin") != std::string::npos);
  fs::remove(base / "save" / "dynamic-1.bin");
  auto ok = test::save(*this, shard, (base / "save").string());
  REQUIRE(ok);
  CHECK(ok->name == "dynamic-1.bin");
  CHECK(ok->bytes == fs::file_size(base / "save" / "dynamic-1.bin"));
  fs::remove_all(base);
}

TEST_CASE_FIXTURE(test::actor_fixture,
                  "embedding shard: killed while save(FOLDER) is written, it still answers the "
                  "save before it stops, hashed and dynamic tables") {
  const auto base = fresh("ss_shard_save_killed");
  for (const bool dynamic : {false, true}) {
    CAPTURE(dynamic);
    const std::string file = dynamic ? "dynamic-1.bin" : "embedding-1.bin";
    auto shard = spawn_small_shard(*this, dynamic);
    fifo_reader fifo(base / file);
    auto saved = held_save(*this, shard, base);
    // The kill is queued before the writer may go on: the shard's mailbox is
    // closed by the time the writer sends its done (the test scheduler is
    // not for other threads).
    self->send_exit(shard, caf::exit_reason::kill);
    fifo.go();
    run();
    // The requester hears the writer's outcome (a FIFO cannot be fsynced),
    // not nothing until its timeout.
    REQUIRE(saved->done());
    auto r = saved->get();
    REQUIRE_FALSE(r);
    CHECK(code_of(r.error()) == errc::io_error);
    const auto why = context_of(r.error());
    CHECK(why.find("embedding-shard-1") != std::string::npos);
    CHECK(why.find(file) != std::string::npos);
    CHECK(why.find("fsync") != std::string::npos);
    CHECK_FALSE(fifo.finish().empty()); // the writer wrote the file through
    fs::remove(base / file);
  }
  fs::remove_all(base);
}
