#pragma once
// Mock peers of the Hogwild worker and the trainer: a reader, embedding
// shards, a syncer and a trainer that record what they receive in one shared
// `recorder`, in processing order. In manual mode they keep the response
// promises so the test decides when (and whether) a reply goes out; in auto
// mode they answer at once (reader: the queued batches, then an empty one;
// shards: mock_row() values; syncer: the round number).
//
// Manual replies: a promise may only be delivered inside its own actor (CAF
// 0.17's test scheduler leaves a dangling execution-unit pointer behind after
// each run, so deliver() from the test body crashes). The recorder's reply
// helpers therefore queue a job under the mock's name; a tick_atom to that
// mock runs its jobs (the fixture's flush() sends the ticks). Reader and
// shard mocks are dynamically typed for that reason, cast to their handles.
// Test-only; runs under the deterministic scheduler (single thread).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/system_messages.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "model/arch.hpp"
#include "model/embedding.hpp"

namespace mocks {

using namespace messages;

// The value a mock shard serves for element j of a row: a small function of
// the key, so tests can rebuild the rows themselves. Range [-0.5, 0.5].
inline float mock_row(std::uint64_t key, std::size_t j) {
  auto v = (model::key_table(key) * 7 + model::key_row(key) * 3 + j) % 11;
  return 0.1f * static_cast<float>(v) - 0.5f;
}

// 3 dense features, 4 tables of 10 rows, dim 4, MLPs 3-8-4 and 14-8-1
// (14 = 4 + the 10 pairwise dots of 5 vectors): small enough to check by hand.
inline model::arch small_arch() {
  model::arch a;
  a.num_dense = 3;
  a.num_tables = 4;
  a.dim = 4;
  a.bottom_hidden = {8};
  a.top_hidden = {8};
  a.rows_per_table = 10;
  return a;
}

// 5 examples; categorical hashes chosen so rows repeat within a table
// (hash % 10: table 0 uses rows 3,3,3,2,3; table 2 uses 5,5,5,5,6; ...).
inline example_batch make_batch(std::uint64_t seq, std::uint64_t shift = 0) {
  const std::uint64_t cats[5][4] = {
    {3, 13, 5, 7}, {23, 4, 5, 17}, {3, 14, 25, 9}, {12, 4, 15, 27}, {33, 2, 6, 8}};
  example_batch b;
  b.seq = seq;
  b.num_dense = 3;
  b.num_cat = 4;
  b.labels.values = {1, 0, 0, 1, 0};
  for (int e = 0; e < 5; ++e) {
    for (int d = 0; d < 3; ++d)
      b.dense.values.push_back(0.1f * float((e + 1) * (d + 1)));
    for (int t = 0; t < 4; ++t)
      b.cat.values.push_back(cats[e][t] + shift);
  }
  return b;
}

struct recorder {
  bool manual_reader = true, manual_shards = true, manual_syncer = true;
  std::size_t dim = 4;                 // floats per row served by the shards
  std::vector<std::string> log;        // "next", "lookup s0 b1", "push s0", "sync request"
  std::deque<example_batch> batches;   // auto reader: served in order
  std::vector<caf::response_promise> nexts;
  struct lookup {
    std::size_t shard;
    lookup_request req;
    caf::response_promise rp;
    bool answered = false;
  };
  std::vector<lookup> lookups;
  struct push {
    std::size_t shard;
    embedding_grads g;
  };
  std::vector<push> pushes;
  std::vector<caf::typed_response_promise<std::uint64_t>> syncs;
  std::vector<worker_stats> done;
  std::map<std::string, caf::error> down; // watch(): name -> exit reason
  std::map<std::string, std::vector<std::function<void()>>> jobs; // per mock, run on tick

  void later(const std::string& who, std::function<void()> f) { jobs[who].push_back(std::move(f)); }
  void run_jobs(const std::string& who) {
    auto js = std::move(jobs[who]);
    jobs[who].clear();
    for (auto& f : js)
      f();
  }

  std::size_t count(const std::string& prefix) const {
    std::size_t n = 0;
    for (const auto& e : log)
      n += e.compare(0, prefix.size(), prefix) == 0 ? 1 : 0;
    return n;
  }
  // Position of the first event equal to `e` (log.size() when absent).
  std::size_t index_of(const std::string& e) const {
    std::size_t i = 0;
    while (i < log.size() && log[i] != e)
      ++i;
    return i;
  }
  // The rows the mock shards serve for `keys`.
  embedding_rows rows_for(const lookup_request& req) const {
    embedding_rows r;
    r.batch = req.batch;
    for (auto k : req.keys.values)
      for (std::size_t j = 0; j < dim; ++j)
        r.rows.values.push_back(mock_row(k, j));
    return r;
  }
  // Queue replies (sent at the next flush): batch for the i-th next
  // request, rows for every unanswered lookup, `round` for the i-th sync.
  void reply_next(std::size_t i, example_batch b) {
    later("reader", [rp = nexts.at(i), b]() mutable { rp.deliver(std::move(b)); });
  }
  void answer_lookups() {
    for (auto& l : lookups)
      if (!l.answered) {
        l.answered = true;
        later("shard" + std::to_string(l.shard),
              [rp = l.rp, r = rows_for(l.req)]() mutable { rp.deliver(std::move(r)); });
      }
  }
  void reply_sync(std::size_t i, std::uint64_t round) {
    later("syncer", [rp = syncs.at(i), round]() mutable { rp.deliver(round); });
  }
};
using recorder_ptr = std::shared_ptr<recorder>;

// Spawn with caf::actor_cast<actors::reader_actor>(sys.spawn(mocks::reader, rec)).
inline caf::behavior reader(caf::event_based_actor* self, recorder_ptr rec) {
  return {
    [=](tick_atom) { rec->run_jobs("reader"); },
    [=](next_atom) -> caf::response_promise {
      rec->log.push_back("next");
      auto rp = self->make_response_promise();
      if (rec->manual_reader) {
        rec->nexts.push_back(rp);
      } else if (rec->batches.empty()) {
        rp.deliver(example_batch{});
      } else {
        rp.deliver(std::move(rec->batches.front()));
        rec->batches.pop_front();
      }
      return rp;
    },
  };
}

// Spawn with caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(mocks::shard, rec, s)).
inline caf::behavior shard(caf::event_based_actor* self, recorder_ptr rec, std::size_t s) {
  return {
    [=](tick_atom) { rec->run_jobs("shard" + std::to_string(s)); },
    [=](lookup_atom, lookup_request& req) -> caf::response_promise {
      rec->log.push_back("lookup s" + std::to_string(s) + " b" + std::to_string(req.batch));
      auto rp = self->make_response_promise();
      const bool answer = !rec->manual_shards;
      if (answer)
        rp.deliver(rec->rows_for(req));
      rec->lookups.push_back({s, req, rp, answer});
      return rp;
    },
    [=](push_atom, embedding_grads& g) {
      rec->log.push_back("push s" + std::to_string(s));
      rec->pushes.push_back({s, std::move(g)});
    },
    [=](dump_atom) { return float_blob{}; },
    [=](cut_atom, std::uint64_t, const std::string&, std::uint32_t) { return shard_cut_file{}; },
    [=](cut_atom, std::uint64_t, const std::string&, const std::vector<std::string>&) {
      return shard_cut_file{};
    },
    [=](cut_atom, std::uint64_t id) {
      rec->log.push_back("shard" + std::to_string(s) + " marker " + std::to_string(id));
    },
    [=](cut_atom, std::uint64_t, resume_atom) {},
    [=](end_atom) {}, // a worker's end (not logged: every worker sends it)
    [=](done_atom, std::uint64_t) {},
  };
}

inline actors::syncer_actor::behavior_type syncer(actors::syncer_actor::pointer self,
                                                  recorder_ptr rec) {
  auto rounds = std::make_shared<std::uint64_t>(0);
  return {
    [=](peers_atom, std::uint32_t, const std::vector<caf::strong_actor_ptr>&) {},
    [=](peers_atom, std::uint32_t, std::uint32_t, const std::vector<caf::strong_actor_ptr>&) {},
    [=](start_atom) { rec->log.push_back("syncer start"); },
    [=](ring_atom, const ring_chunk&) {},
    [=](ring_atom, const ring_sparse&) {},
    [=](sync_atom) -> caf::typed_response_promise<std::uint64_t> {
      rec->log.push_back("sync request");
      auto rp = self->make_response_promise<std::uint64_t>();
      if (rec->manual_syncer)
        rec->syncs.push_back(rp);
      else
        rp.deliver(++*rounds);
      return rp;
    },
    [=](end_atom) { rec->log.push_back("syncer end"); },
    [=](stats_atom) { return *rounds; },
    [=](stop_atom, std::uint64_t) {
      rec->log.push_back("syncer stop");
      sync_stats s;
      s.rounds = *rounds;
      return s;
    },
    [=](tick_atom) { rec->run_jobs("syncer"); },
    [=](wake_atom) { rec->log.push_back("syncer wake"); },
    [=](hold_atom, std::uint64_t) { return sync_hold{}; },
    [=](aim_atom, std::uint64_t r) { return r; },
    [=](resume_atom) {},
  };
}

// Records done_atom + worker_stats; the rest answers with empty values.
inline actors::trainer_actor::behavior_type trainer(actors::trainer_actor::pointer self,
                                                    recorder_ptr rec) {
  return {
    [=](start_atom) { return worker_stats{}; },
    [=](done_atom, const worker_stats& ws) {
      rec->log.push_back("done");
      rec->done.push_back(ws);
    },
    [=](stats_atom) { return progress_report{}; },
    [=](peers_atom) { return caf::strong_actor_ptr{}; },
    [=](sync_atom) { return std::uint64_t{0}; },
    [=](stop_atom, std::uint64_t) { return trainer_report{}; },
    [=](cut_atom, std::uint64_t, std::uint64_t) { return cut_report{}; },
    [=](workers_atom) { return std::vector<caf::strong_actor_ptr>{}; },
    [=](parked_atom, std::uint64_t id) { rec->log.push_back("parked " + std::to_string(id)); },
    [=](resume_atom) {},
    [=](rebind_atom, std::uint32_t, const caf::strong_actor_ptr&) {},
  };
}

// Monitors `who` and records its exit reason under `name` (a normal exit
// records an empty error). Keep the returned handle until the DOWN: an actor
// nobody references is cleaned up.
template <class Handle>
caf::actor watch(caf::actor_system& sys, const Handle& who, recorder_ptr rec, std::string name) {
  // `name` as a spawn argument: CAF 0.17 binds a null tuple for argument-less
  // actor functions (UBSan; see test_fixture.hpp).
  return sys.spawn([who, rec](caf::event_based_actor* self, std::string name) -> caf::behavior {
    self->monitor(who);
    self->set_down_handler([=](caf::down_msg& dm) {
      rec->down[name] = dm.reason;
      self->quit();
    });
    return {[](tick_atom) {}}; // a behaviour keeps the watcher alive until the DOWN
  }, name);
}

// A worker's peers as mocks: its reader, two embedding shards, its syncer and
// its trainer. Fixtures inherit it; stop() ends them all.
struct peers {
  actors::reader_actor reader;
  std::vector<actors::embedding_shard_actor> shards;
  actors::syncer_actor syncer;
  actors::trainer_actor trainer;

  void spawn_peers(caf::actor_system& sys, const recorder_ptr& rec) {
    reader = caf::actor_cast<actors::reader_actor>(sys.spawn(mocks::reader, rec));
    for (std::size_t s = 0; s < 2; ++s)
      shards.push_back(
        caf::actor_cast<actors::embedding_shard_actor>(sys.spawn(mocks::shard, rec, s)));
    syncer = sys.spawn(mocks::syncer, rec);
    trainer = sys.spawn(mocks::trainer, rec);
  }

  template <class Self>
  void stop_peers(Self& self) {
    self->send_exit(reader, caf::exit_reason::user_shutdown);
    for (auto& s : shards)
      self->send_exit(s, caf::exit_reason::user_shutdown);
    self->send_exit(syncer, caf::exit_reason::user_shutdown);
    self->send_exit(trainer, caf::exit_reason::user_shutdown);
  }
};

} // namespace mocks
