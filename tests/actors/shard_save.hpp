#pragma once
// An embedding shard's save(FOLDER) under the deterministic scheduler
// (actors/embedding_shard_save.cpp): the shard's writer thread sends it
// done(save, N), and the test scheduler's job queue is not for other
// threads. So a test joins the shard's save writers before it runs the
// scheduler again: after that, nothing but the test thread sends.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>

#include <caf/actor_cast.hpp>

#include "actors/embedding_shard.hpp"
#include "tests/actors/test_fixture.hpp"

namespace test {

// A file's bytes (a shard's saved file, to compare).
inline std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The state of a running shard (no handler of it runs meanwhile).
inline actors::embedding_shard_state& shard_state(const actors::embedding_shard_actor& h) {
  using impl = std::remove_pointer_t<
    actors::embedding_shard_actor::stateful_pointer<actors::embedding_shard_state>>;
  return dynamic_cast<impl&>(*caf::actor_cast<caf::abstract_actor*>(h)).state;
}

// Waits until every save writer of the shard has written its file and sent
// its done (delivered by the next run()).
inline void join_saves(const actors::embedding_shard_actor& h) {
  for (auto& s : shard_state(h).saves) {
    if (s->writer)
      s->writer->finish();
    if (s->dynamic && s->dynamic->thread.joinable())
      s->dynamic->thread.join();
  }
}

// The reply of save(FOLDER).
struct saved_file {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint32_t crc32c = 0;
};

// Sends save(folder) to the shard from a fresh collector actor; runs nothing.
inline std::shared_ptr<reply_slot<saved_file>>
save_async(actor_fixture& f, const actors::embedding_shard_actor& shard,
           const std::string& folder) {
  auto slot = std::make_shared<reply_slot<saved_file>>();
  f.sys.spawn(
    [shard, folder](caf::event_based_actor* s, std::shared_ptr<reply_slot<saved_file>> slot) {
      s->request(shard, caf::infinite, messages::save_atom::value, folder)
        .then(
          [slot](std::string& name, std::uint64_t bytes, std::uint32_t crc) {
            slot->value = saved_file{std::move(name), bytes, crc};
          },
          [slot](caf::error& e) { slot->error = std::move(e); });
    },
    slot);
  return slot;
}

// save(folder), run, join the writers, run: the reply or the error.
inline caf::expected<saved_file> save(actor_fixture& f, const actors::embedding_shard_actor& shard,
                                      const std::string& folder) {
  auto slot = save_async(f, shard, folder);
  f.run();
  join_saves(shard);
  f.run();
  return slot->get();
}

} // namespace test
