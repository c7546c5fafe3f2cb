// The embedding shard's cut files (see embedding_shard_cut.cpp for the
// protocol): once a cut aligns, its writer (hashed tables: the background
// writer's copy-on-write pass; dynamic tables: a copy of the tables written
// off the handler), the reply with the file's name, bytes and CRC32C, and in
// multi-node runs the file kept in memory and fetched in pieces:
//   writer thread -> shard: done(N)
//   coordinator -> shard: cut(N, offset) -> file_chunk
#include "actors/embedding_shard_cut.hpp"
#include "actors/off_handler.hpp"

#include <algorithm>
#include <memory>
#include <thread>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include "actors/work.hpp"
#include "checkpoint/crc32c.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "messages/errors.hpp"

namespace actors::shard_cut_detail {

namespace {

// Replies the cut's file (or the error) and ends the cut.
void reply(self_ptr self, const checkpoint::file_info& file, std::uint64_t rows_copied,
           const std::optional<std::string>& err) {
  auto& st = self->state;
  count(work::cut_copy, double(file.bytes));
  if (st.cfg.cpr.charge_cuts)
    store_wait(self->system(), double(file.bytes), st.cfg.cpr.storage_gbps);
  messages::shard_cut_file f;
  f.name = file.name;
  f.bytes = file.bytes;
  f.crc32c = file.crc32c;
  f.rows_copied = rows_copied;
  f.pushes_held = st.cut->pushes_held;
  auto rp = std::move(st.cut->promise);
  st.last_cut = st.cut->id;
  st.writer.reset();
  st.cut.reset();
  if (err)
    rp.deliver(messages::make_error(messages::errc::io_error, st.who() + ": " + *err));
  else
    rp.deliver(std::move(f));
}

// Multi-node: the cut's file, kept until fetched (on_fetch); *file: its
// name, bytes and CRC32C for the reply.
void keep_image(self_ptr self, std::shared_ptr<checkpoint::file_image> image,
                checkpoint::file_info& file) {
  auto& st = self->state;
  file = {image->name(), image->size(), image->crc32c()};
  st.kept_cut = std::move(image);
  st.kept_cut_id = st.cut->id;
  st.kept_shipped = 0;
  st.kept_crc = 0;
}

// Dynamic tables: the file (FOLDER/dynamic-S.bin, with the shard's own
// sketches and counters, as the shard's save) holds the tables as they are
// now, before the held pushes: a copy of them, written off the handler
// (actors/off_handler.hpp) while the held pushes apply to the tables;
// on_written replies.
void write_dynamic(self_ptr self) {
  auto& st = self->state;
  auto& c = *st.cut;
  const bool keep = c.folder.empty(); // multi-node: kept for the fetch
  auto copy = std::make_unique<model::dynamic_tables>(*st.dyn);
  auto job = std::make_unique<dynamic_cut_job>();
  auto* out = job.get();
  st.dynamic_writer = std::move(job);
  apply_held(self);
  auto thread = off_handler(
    self->system(),
    [out, copy = std::move(copy),
     path = c.folder + "/" + checkpoint::dynamic_file_name(st.cfg.shard), shard = st.cfg.shard,
     shards = st.cfg.num_shards, keep] {
      if (keep) {
        out->image = std::make_shared<checkpoint::file_image>(
          checkpoint::dynamic_image(*copy, shard, shards,
                                     checkpoint::dynamic_counters::own_shard));
        out->info = {out->image->name(), out->image->size(), out->image->crc32c()};
        out->ok = true;
      } else {
        out->ok =
          checkpoint::write_dynamic_file(path, *copy, shard, shards,
                                             checkpoint::dynamic_counters::own_shard, &out->info,
                                             &out->err);
      }
    },
    [me = caf::actor_cast<embedding_shard_actor>(self), id = c.id] {
      caf::send_as(me, me, messages::done_atom::value, id); // from the shard itself
    },
    [self, id = c.id] { on_written(self, id); });
  if (thread.joinable()) // (else it has finished: on_written ran)
    out->thread = std::move(thread);
}

} // namespace

checkpoint::background_writer::job writer_job(const embedding_shard_state& st,
                                              const std::string& folder, bool to_image) {
  checkpoint::background_writer::job j;
  j.into = folder;
  j.to_image = to_image;
  j.full_rows_per_table = st.cfg.rows_per_table;
  j.shard = st.cfg.shard;
  j.num_shards = st.cfg.num_shards;
  return j;
}

void start_writer(self_ptr self) {
  auto& st = self->state;
  auto& c = *st.cut;
  if (st.dyn)
    return write_dynamic(self);
  auto j = writer_job(st, c.folder, c.folder.empty()); // multi-node: kept for the fetch
  // The writer thread reports back (on_written), or the handler waits for
  // it (actors/off_handler.hpp).
  on_own_thread(
    self->system(),
    [&](std::function<void()> done) {
      j.on_finished = std::move(done);
      st.writer = std::make_unique<checkpoint::background_writer>(std::move(j), *st.tables);
    },
    [self] { apply_held(self); }, // copied on write: after the cut
    [me = caf::actor_cast<embedding_shard_actor>(self), id = c.id] {
      caf::send_as(me, me, messages::done_atom::value, id); // from the shard itself
    },
    [self, id = c.id] { on_written(self, id); });
}

void on_written(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  if (!st.cut || st.cut->id != id)
    return;
  if (st.dynamic_writer) {
    const auto job = std::move(st.dynamic_writer);
    if (job->thread.joinable()) // it has sent: about to end
      job->thread.join();
    if (job->image)
      keep_image(self, std::move(job->image), job->info);
    reply(self, job->info, 0, job->ok ? std::nullopt : std::optional<std::string>(job->err));
    return;
  }
  if (!st.writer)
    return;
  const auto err = st.writer->finish();
  auto file = st.writer->file();
  if (!err && st.cut->folder.empty())
    keep_image(self, std::make_shared<checkpoint::file_image>(st.writer->take_image()), file);
  reply(self, file, st.writer->side_rows(), err);
}

caf::result<messages::file_chunk> on_fetch(self_ptr self, std::uint64_t id,
                                           std::uint64_t offset) {
  auto& st = self->state;
  const auto bad = [&](const std::string& what) {
    return messages::make_error(messages::errc::bad_request,
                                st.who() + ": a piece of cut " + std::to_string(id) +
                                  "'s file at offset " + std::to_string(offset) + ": " + what);
  };
  if (!st.kept_cut || st.kept_cut_id != id)
    return bad(st.kept_cut ? "it keeps cut " + std::to_string(st.kept_cut_id) + "'s file"
                           : "it keeps no cut's file (asked with a folder, or fetched)");
  if (offset == 0) { // (again from the start)
    st.kept_shipped = 0;
    st.kept_crc = 0;
  }
  if (offset != st.kept_shipped)
    return bad("expected " + std::to_string(st.kept_shipped));
  const auto& img = *st.kept_cut;
  messages::file_chunk c;
  c.name = img.name();
  c.size = img.size();
  c.offset = offset;
  const auto n = std::size_t(
    std::min<std::uint64_t>(embedding_shard_state::ship_piece_bytes, c.size - offset));
  c.bytes.values.resize(n);
  img.read(offset, c.bytes.data(), n);
  st.kept_crc = checkpoint::crc32c_extend(st.kept_crc, c.bytes.data(), n);
  st.kept_shipped += n;
  c.crc32c = st.kept_crc;
  if (st.kept_shipped == c.size)
    st.kept_cut.reset(); // the last piece: the copy goes
  return c;
}

} // namespace actors::shard_cut_detail
