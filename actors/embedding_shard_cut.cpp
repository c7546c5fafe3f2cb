// The embedding shard's side of a checkpoint cut (see embedding_shard.hpp):
//   coordinator -> shard: cut(N, FOLDER, W); shard -> coordinator: shard_cut_file
//   worker -> shard: cut(N) (marker), end
//   writer thread -> shard: done(N)
// Dynamic tables: the file is written from a copy of the tables taken by the
// handler that aligns the cut, by a thread of its own (within that handler
// on the discrete-event engine).
// Multi-node (FOLDER ""): the same file is kept in memory instead, and the
// coordinator fetches it:  coordinator -> shard: cut(N, offset) -> file_chunk.
#include "actors/embedding_shard_cut.hpp"
#include "actors/off_handler.hpp"

#include <algorithm>
#include <memory>
#include <thread>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <spdlog/spdlog.h>

#include "actors/peer.hpp"
#include "actors/work.hpp"
#include "checkpoint/crc32c.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "messages/errors.hpp"
#include "messages/peer_bounds.hpp"

namespace actors::shard_cut_detail {

namespace {

bool contains(const std::vector<caf::actor_addr>& xs, const caf::actor_addr& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

caf::actor_addr sender(self_ptr self) {
  return caf::actor_cast<caf::actor_addr>(self->current_sender());
}

// "" when one more sender (marker or end) stays within the job's workers.
std::string over_workers(const embedding_shard_state& st, std::size_t senders) {
  if (st.cfg.max_workers == 0)
    return {};
  return messages::check_count("senders", senders, st.cfg.max_workers,
                               "cluster.trainers x cluster.workers");
}

// `from`: the sender (a request's promise has taken it from the message).
void refuse(self_ptr self, const std::string& what, const caf::strong_actor_ptr& from) {
  spdlog::warn("{}: {} (refused; sent by {})", self->state.who(), what, peer_name(from));
}

void refuse(self_ptr self, const std::string& what) {
  refuse(self, what, self->current_sender());
}

void apply_held(self_ptr self);

// Ends the unaligned cut in progress, which the coordinator gave up
// (`why`): the pushes it held are applied, in order.
void end_unaligned(self_ptr self, const std::string& why) {
  auto& st = self->state;
  auto& c = *st.cut;
  spdlog::info("{}: cut {} ends unfinished: {}", st.who(), c.id, why);
  apply_held(self);
  auto rp = std::move(c.promise);
  const auto old = c.id;
  st.last_cut = old;
  st.cut.reset();
  if (rp.pending())
    rp.deliver(messages::make_error(messages::errc::bad_request,
                                    st.who() + ": cut " + std::to_string(old) + " " + why));
}

// A message of cut `id` while an older cut is still here: the coordinator
// aborted that one (a trainer was lost during it, and its workers never
// mark) and went on. Unaligned, it ends (if the coordinator's give-up did
// not reach here first); aligned, its writer is awaited here (rare: only
// after an abort).
void end_older(self_ptr self, std::uint64_t id) {
  if (!self->state.cut->aligned)
    return end_unaligned(self, "given up: cut " + std::to_string(id) + " began");
  spdlog::info("{}: cut {} waits for its writer: cut {} began", self->state.who(),
               self->state.cut->id, id);
  on_written(self, self->state.cut->id); // (its done message, when it comes, finds no cut)
}

// The cut numbered id, begun by whichever of its messages came first.
shard_cut* cut_for(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  if (id <= st.last_cut) {
    refuse(self, "a message of cut " + std::to_string(id) + ", expected a cut after " +
                   std::to_string(st.last_cut));
    return nullptr;
  }
  if (st.cut && st.cut->id < id)
    end_older(self, id);
  if (!st.cut) {
    st.cut.emplace();
    st.cut->id = id;
  }
  if (st.cut->id != id) {
    spdlog::warn("{}: a message of cut {} during cut {} (ignored)", st.who(), id, st.cut->id);
    return nullptr;
  }
  return &*st.cut;
}

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

void apply_held(self_ptr self) {
  auto& c = *self->state.cut;
  for (const auto& g : c.held)
    apply_push(self, g);
  c.held.clear();
  c.held.shrink_to_fit();
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

// Starts the writer once every worker has marked or ended.
void try_align(self_ptr self) {
  auto& st = self->state;
  auto& c = *st.cut;
  if (c.aligned || !c.requested)
    return;
  std::size_t n = 0;
  if (c.only.empty()) {
    n = c.marked.size();
    for (const auto& e : st.ended)
      n += contains(c.marked, e) ? 0 : 1;
  } else { // the listed workers only: an ended worker of a lost trainer is not one
    const auto in = [](const std::vector<std::string>& xs, const std::string& x) {
      return std::find(xs.begin(), xs.end(), x) != xs.end();
    };
    for (const auto& w : c.only)
      n += in(c.marked_names, w) || in(st.ended_names, w) ? 1 : 0;
  }
  if (n < c.expected)
    return;
  c.aligned = true;
  if (st.dyn)
    return write_dynamic(self);
  checkpoint::background_writer::job j;
  j.into = c.folder;
  j.to_image = c.folder.empty(); // multi-node: kept for the fetch
  j.full_rows_per_table = st.cfg.rows_per_table;
  j.shard = st.cfg.shard;
  j.num_shards = st.cfg.num_shards;
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

} // namespace

namespace {

// Either request: over `expected` workers, or over exactly `only` (then
// expected is their number).
void request_cut(self_ptr self, std::uint64_t id, const std::string& folder,
                 std::uint32_t expected, std::vector<std::string> only,
                 caf::typed_response_promise<messages::shard_cut_file> rp) {
  auto& st = self->state;
  if (auto bad = st.cfg.max_workers == 0
                   ? std::string{}
                   : messages::check_count("workers", expected, st.cfg.max_workers,
                                           "cluster.trainers x cluster.workers");
      !bad.empty()) {
    const auto what = "cut " + std::to_string(id) + " asked to wait for " + bad;
    refuse(self, what, static_cast<caf::response_promise&>(rp).next());
    rp.deliver(messages::make_error(messages::errc::bad_request, st.who() + ": " + what));
    return;
  }
  auto* c = cut_for(self, id);
  if (!c || c->requested) {
    rp.deliver(messages::make_error(messages::errc::bad_request,
                                    self->state.who() + ": cut " + std::to_string(id) +
                                      " asked while another is in progress"));
    return;
  }
  c->requested = true;
  c->folder = folder;
  c->expected = expected;
  c->only = std::move(only);
  c->promise = std::move(rp);
  try_align(self);
}

} // namespace

void on_request(self_ptr self, std::uint64_t id, const std::string& folder,
                std::uint32_t expected,
                caf::typed_response_promise<messages::shard_cut_file> rp) {
  request_cut(self, id, folder, expected, {}, std::move(rp));
}

void on_request(self_ptr self, std::uint64_t id, const std::string& folder,
                const std::vector<std::string>& only,
                caf::typed_response_promise<messages::shard_cut_file> rp) {
  std::vector<std::string> workers;
  for (const auto& a : only) {
    const bool named = a.find('@') != std::string::npos && a.size() <= 200;
    if (!named || std::find(workers.begin(), workers.end(), a) != workers.end()) {
      const auto what = "cut " + std::to_string(id) + " asked to wait for a worker list with " +
                        (named ? "a worker twice" : "a name not of the form ID@NODE") +
                        ", expected distinct workers";
      refuse(self, what, static_cast<caf::response_promise&>(rp).next());
      rp.deliver(messages::make_error(messages::errc::bad_request,
                                      self->state.who() + ": " + what));
      return;
    }
    workers.push_back(a);
  }
  if (workers.empty()) {
    const auto what = "cut " + std::to_string(id) + " asked to wait for an empty worker list, " +
                      "expected the live workers";
    refuse(self, what, static_cast<caf::response_promise&>(rp).next());
    rp.deliver(messages::make_error(messages::errc::bad_request, self->state.who() + ": " + what));
    return;
  }
  const auto n = std::uint32_t(workers.size());
  request_cut(self, id, folder, n, std::move(workers), std::move(rp));
}

void on_marker(self_ptr self, std::uint64_t id) {
  auto* c = cut_for(self, id);
  if (!c)
    return;
  const auto who = sender(self);
  if (!c->only.empty() &&
      std::find(c->only.begin(), c->only.end(), caf::to_string(who)) == c->only.end())
    return; // (not a worker this cut waits for: a lost trainer's)
  if (!contains(c->marked, who)) {
    if (auto bad = over_workers(self->state, c->marked.size() + 1); !bad.empty()) {
      refuse(self, "a marker of cut " + std::to_string(id) + " from " + bad);
      return;
    }
    c->marked.push_back(who);
    c->marked_names.push_back(caf::to_string(who));
  }
  try_align(self);
}

void on_given_up(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  if (st.cut && st.cut->id == id && !st.cut->aligned)
    return end_unaligned(self, "given up by the coordinator");
  // (Aligned, it ends by itself. Not begun here: its late markers are
  // refused from now on instead of beginning it.)
  if (!st.cut && id > st.last_cut)
    st.last_cut = id;
}

void on_end(self_ptr self) {
  auto& st = self->state;
  const auto who = sender(self);
  if (!contains(st.ended, who)) {
    if (auto bad = over_workers(st, st.ended.size() + 1); !bad.empty()) {
      refuse(self, "an end from " + bad);
      return;
    }
    st.ended.push_back(who);
    st.ended_names.push_back(caf::to_string(who));
  }
  if (st.cut)
    try_align(self);
}

bool hold_push(self_ptr self, messages::embedding_grads& g) {
  auto& st = self->state;
  if (!st.cut || st.cut->aligned || !contains(st.cut->marked, sender(self)))
    return false;
  st.cut->held.push_back(std::move(g));
  ++st.cut->pushes_held;
  return true;
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
