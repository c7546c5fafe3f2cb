// The embedding shard's side of a checkpoint cut (see embedding_shard.hpp):
//   coordinator -> shard: cut(N, FOLDER, W); shard -> coordinator: shard_cut_file
//   worker -> shard: cut(N) (marker), end
//   writer thread -> shard: done(N)
// Dynamic tables: the file is written from a copy of the tables taken by the
// handler that aligns the cut, by a thread of its own (within that handler
// on the discrete-event engine).
// Multi-node (FOLDER ""): the same file is kept in memory instead, and the
// coordinator fetches it:  coordinator -> shard: cut(N, offset) -> file_chunk.
// After a trainer's loss: cut(N, FOLDER, ["ID@NODE", ...]) aligns over the
// listed workers; cut(N, resume) gives an aborted cut up.
// This file: the requests, markers, ends and the alignment; the writers, the
// reply and the fetch are in embedding_shard_cut_write.cpp.
#include "actors/embedding_shard_cut.hpp"

#include <algorithm>

#include <caf/actor_cast.hpp>
#include <spdlog/spdlog.h>

#include "actors/peer.hpp"
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
  start_writer(self);
}

} // namespace

void apply_held(self_ptr self) {
  auto& c = *self->state.cut;
  for (const auto& g : c.held)
    apply_push(self, g);
  c.held.clear();
  c.held.shrink_to_fit();
}

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


} // namespace actors::shard_cut_detail
