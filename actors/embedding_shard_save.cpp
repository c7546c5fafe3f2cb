// The embedding shard's export save (see embedding_shard.hpp):
//   coordinator -> shard: save(FOLDER); shard -> coordinator: name, bytes, CRC32C
//   writer thread -> shard: done(save, N)
// The file holds the rows as they are when save(FOLDER) is handled. It is
// written off the handler (actors/off_handler.hpp): where threads may send
// (the wall clock) by a thread while the shard goes on serving, and the
// promise is delivered from the shard's own handler of the thread's done
// (CAF 0.17 does not say a promise may be delivered from another thread);
// on the discrete-event engine within the handler, which answers at once.
#include "actors/embedding_shard_save.hpp"

#include <algorithm>
#include <memory>
#include <thread>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <spdlog/spdlog.h>

#include "actors/off_handler.hpp"
#include "actors/work.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/model_files.hpp"
#include "messages/errors.hpp"

namespace actors::shard_save_detail {

namespace {

caf::error io_error(const embedding_shard_state& st, const std::string& err) {
  return messages::make_error(messages::errc::io_error, st.who() + ": " + err);
}

// Waits for save s's writer and replies its file, or the error naming it.
void answer(const embedding_shard_state& st, shard_save& s) {
  checkpoint::file_info info;
  std::optional<std::string> err;
  if (s.dynamic) {
    if (s.dynamic->thread.joinable()) // it has sent, or is about to
      s.dynamic->thread.join();
    info = s.dynamic->info;
    if (!s.dynamic->ok)
      err = s.dynamic->err;
  } else {
    err = s.writer->finish();
    info = s.writer->file();
  }
  if (err)
    s.promise.deliver(io_error(st, *err));
  else
    s.promise.deliver(info.name, info.bytes, info.crc32c);
}

} // namespace

save_result on_save(self_ptr self, const std::string& folder) {
  auto& st = self->state;
  auto s = std::make_unique<shard_save>();
  const auto id = s->id = ++st.saves_started;
  s->promise = self->make_response_promise<std::string, std::uint64_t, std::uint32_t>();
  auto rp = s->promise;
  auto* out = s.get();
  st.saves.push_back(std::move(s));
  auto notify = [me = caf::actor_cast<embedding_shard_actor>(self), id] {
    caf::send_as(me, me, messages::done_atom::value, messages::save_atom::value, id);
  };
  auto finish = [self, id] { on_saved(self, id); };
  if (st.dyn) {
    // A copy of the tables now (FOLDER/dynamic-S.bin, with the shard's own
    // sketches and counters), written off the handler.
    auto copy = std::make_unique<model::dynamic_tables>(*st.dyn);
    out->dynamic = std::make_unique<dynamic_cut_job>();
    auto thread = off_handler(
      self->system(),
      [job = out->dynamic.get(), copy = std::move(copy),
       path = folder + "/" + checkpoint::dynamic_file_name(st.cfg.shard), shard = st.cfg.shard,
       shards = st.cfg.num_shards] {
        job->ok = checkpoint::write_dynamic_file(path, *copy, shard, shards,
                                                 checkpoint::dynamic_counters::own_shard,
                                                 &job->info, &job->err);
      },
      notify, finish);
    if (thread.joinable()) // (else it has finished: on_saved answered)
      out->dynamic->thread = std::move(thread);
  } else {
    // The background writer streams the rows as they are now; a push before
    // it is done copies the rows it changes first (embedding_shard_rows.cpp).
    auto j = shard_cut_detail::writer_job(st, folder, false);
    on_own_thread(
      self->system(),
      [&](std::function<void()> done) {
        j.on_finished = std::move(done);
        out->writer = std::make_unique<checkpoint::background_writer>(std::move(j), *st.tables);
      },
      [] {}, notify, finish);
  }
  return rp;
}

void on_saved(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  const auto it = std::find_if(st.saves.begin(), st.saves.end(),
                               [id](const auto& s) { return s->id == id; });
  if (it == st.saves.end())
    return;
  const auto s = std::move(*it);
  st.saves.erase(it);
  answer(st, *s);
}

void answer_on_exit(embedding_shard_state& st) {
  if (st.saves.empty())
    return;
  spdlog::info("{}: stopping with {} save(s) in flight: each is finished and answered first",
               st.who(), st.saves.size());
  for (auto& s : st.saves)
    answer(st, *s);
  st.saves.clear();
}

void wait_writers(self_ptr self) {
  for (auto& s : self->state.saves)
    if (s->writer)
      s->writer->finish();
}

} // namespace actors::shard_save_detail

namespace actors {

embedding_shard_state::~embedding_shard_state() { shard_save_detail::answer_on_exit(*this); }

} // namespace actors
