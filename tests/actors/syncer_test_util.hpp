#pragma once
// Helpers for the shadow syncer tests: a mock dense shard (the EASGD centre
// step of model/sync_rules.hpp, optionally holding its replies until told),
// replicas, a ring of syncers, peeking at a syncer's state, and watching an
// actor's exit reason.
#include <chrono>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/dense_shard.hpp"
#include "actors/shadow_syncer.hpp"
#include "tests/actors/test_fixture.hpp"

namespace syncer_test {

using namespace messages;
using actors::dense_shard_actor;
using actors::replica_ptr;
using actors::syncer_actor;
using actors::syncer_config;
using actors::syncer_state;

// A dense shard plus a tick that releases held exchange replies.
using mock_shard_actor = dense_shard_actor::extend<caf::reacts_to<tick_atom>>;

struct mock_shard_state {
  static inline const char* name = "mock-dense-shard";
  std::vector<float> centre;
  std::uint64_t offset = 0;
  float alpha = 0.5f;
  bool hold = false; // keep exchange replies until a tick
  std::size_t exchanges = 0;
  std::vector<std::pair<caf::typed_response_promise<dense_range>, dense_range>> held;
};

inline mock_shard_actor::behavior_type
mock_shard(mock_shard_actor::stateful_pointer<mock_shard_state> self, std::vector<float> centre,
           std::uint64_t offset, float alpha, bool hold) {
  auto& st = self->state;
  st.centre = std::move(centre);
  st.offset = offset;
  st.alpha = alpha;
  st.hold = hold;
  return {
    [self](exchange_atom, dense_range& w) -> caf::result<dense_range> {
      auto& st = self->state;
      CHECK(w.offset == st.offset);
      if (w.values.size() != st.centre.size())
        return make_error(errc::bad_request, "mock shard: wrong size");
      ++st.exchanges;
      dense_range d{st.offset, float_blob{std::vector<float>(st.centre.size())}};
      model::easgd_centre_step(st.centre.data(), w.values.data(), st.alpha, d.values.data(),
                               st.centre.size());
      if (!st.hold)
        return d;
      auto p = self->make_response_promise<dense_range>();
      st.held.emplace_back(p, std::move(d));
      return p;
    },
    [](exchange_atom, messages::sparse_range&) -> caf::result<messages::sparse_range> {
      return make_error(errc::bad_request, "mock shard: no DCT (the DCT tests use dense_shard)");
    },
    [self](dump_atom) { return dense_range{self->state.offset, float_blob{self->state.centre}}; },
    [self](tick_atom) {
      for (auto& [p, d] : self->state.held)
        p.deliver(std::move(d));
      self->state.held.clear();
    },
  };
}

// Real dense shards over `ranges` of the centre c, alpha 0.5, for a job of
// `trainers` (the DCT exchanges' trainer ids are below it).
inline std::vector<dense_shard_actor> real_dense_shards(test::actor_fixture& fx,
                                                        const std::vector<float>& c,
                                                        const std::vector<model::range>& ranges,
                                                        const model::dct_settings& dct = {},
                                                        std::uint32_t trainers = 8) {
  std::vector<dense_shard_actor> out;
  for (std::uint32_t k = 0; k < ranges.size(); ++k) {
    actors::dense_shard_config dc;
    dc.shard = k;
    dc.offset = ranges[k].offset;
    dc.initial.assign(c.begin() + std::ptrdiff_t(ranges[k].offset),
                      c.begin() + std::ptrdiff_t(ranges[k].offset + ranges[k].size));
    dc.alpha = 0.5f;
    dc.dct = dct;
    dc.num_trainers = trainers;
    out.push_back(fx.sys.spawn(actors::dense_shard, dc));
  }
  return out;
}

inline replica_ptr make_replica(const std::vector<float>& v) {
  return std::make_shared<actors::hogwild_replica>(v);
}

inline std::vector<float> values(const replica_ptr& r) { return r->snapshot(); }

// The state of a running syncer (the test scheduler runs nothing concurrently).
inline syncer_state& state_of(const syncer_actor& h) {
  using impl = std::remove_pointer_t<syncer_actor::stateful_pointer<syncer_state>>;
  return dynamic_cast<impl&>(*caf::actor_cast<caf::abstract_actor*>(h)).state;
}

// The exit reason of `h` lands in `reason` once it has terminated; keep the
// watch (its `watcher` handle keeps the monitoring actor alive).
struct exit_watch {
  caf::actor watcher;
  std::shared_ptr<std::optional<caf::error>> reason;
};
template <class Handle>
exit_watch watch(caf::actor_system& sys, const Handle& h) {
  auto out = std::make_shared<std::optional<caf::error>>();
  // `out` as a spawn argument: CAF 0.17 binds a null tuple for argument-less
  // actor functions (UBSan; see test_fixture.hpp).
  auto w = sys.spawn([h](caf::event_based_actor* s, std::shared_ptr<std::optional<caf::error>> out) -> caf::behavior {
    s->monitor(h);
    s->set_down_handler([s, out](caf::down_msg& dm) {
      *out = dm.reason;
      s->quit();
    });
    return {[](int) {}};
  }, out);
  return {w, out};
}

// N ring syncers over the given replicas, wired with peers_atom (not started).
inline std::vector<syncer_actor> spawn_ring(test::actor_fixture& fx, syncer_config base,
                                            const std::vector<replica_ptr>& replicas) {
  std::vector<syncer_actor> out;
  std::vector<caf::strong_actor_ptr> ptrs;
  for (std::uint32_t r = 0; r < replicas.size(); ++r) {
    auto cfg = base;
    cfg.trainer = r;
    cfg.num_trainers = static_cast<std::uint32_t>(replicas.size());
    cfg.replica = replicas[r];
    out.push_back(fx.sys.spawn(actors::shadow_syncer, cfg));
    ptrs.push_back(caf::actor_cast<caf::strong_actor_ptr>(out.back()));
  }
  for (std::uint32_t r = 0; r < out.size(); ++r)
    fx.self->send(out[r], peers_atom::value, r, ptrs);
  fx.run();
  return out;
}

// Kills the registered actors when the test ends, passed or failed (mock
// shards holding promises and syncers holding shards would keep each other
// alive and hang the actor system's shutdown). Mutes the error logs their
// ring peers write when they see them go (that path has its own test).
struct reaper {
  test::actor_fixture& fx;
  std::vector<caf::strong_actor_ptr> actors;
  explicit reaper(test::actor_fixture& f) : fx(f) {}
  reaper(const reaper&) = delete;
  reaper& operator=(const reaper&) = delete;
  template <class Handle>
  void add(const Handle& h) {
    actors.push_back(caf::actor_cast<caf::strong_actor_ptr>(h));
  }
  template <class List>
  void add_all(const List& hs) {
    for (const auto& h : hs)
      add(h);
  }
  ~reaper() {
    auto level = spdlog::get_level();
    spdlog::set_level(spdlog::level::off);
    for (const auto& a : actors)
      fx.self->send_exit(caf::actor_cast<caf::actor>(a), caf::exit_reason::kill);
    fx.run();
    spdlog::set_level(level);
  }
};

// The ring's tests (syncer_ring_test.cpp, syncer_dct_reduce_test.cpp).
// Trainer r's replica: element i = 10 r + i (7 floats: uneven ring chunks).
inline std::vector<replica_ptr> distinct_replicas(std::uint32_t n, std::size_t size = 7) {
  std::vector<replica_ptr> out;
  for (std::uint32_t r = 0; r < n; ++r) {
    std::vector<float> v(size);
    for (std::size_t i = 0; i < size; ++i)
      v[i] = float(10 * r + i);
    out.push_back(make_replica(v));
  }
  return out;
}

inline std::vector<float> average(const std::vector<std::vector<float>>& xs) {
  std::vector<float> avg(xs[0].size(), 0.0f);
  for (const auto& x : xs)
    for (std::size_t i = 0; i < avg.size(); ++i)
      avg[i] += x[i];
  for (auto& a : avg)
    a /= float(xs.size());
  return avg;
}

inline syncer_config ring_config(model::sync_algorithm alg, model::merge_mode merge) {
  syncer_config cfg;
  cfg.algorithm = alg;
  cfg.merge = merge;
  cfg.min_pause = std::chrono::seconds(1); // one round per second of fake time
  return cfg;
}

inline void start_all(test::actor_fixture& fx, const std::vector<syncer_actor>& ss) {
  for (const auto& s : ss)
    fx.self->send(s, start_atom::value);
}

// A ring of 3 syncers (ss, over reps; cfg.reform_on_loss, one round per
// second): round 1 with all three, member 2 killed, the survivors re-formed
// as generation 1, and round 2 run. Returns the survivors' replicas as round
// 1 left them.
inline std::vector<std::vector<float>> round_after_reform(test::actor_fixture& fx,
                                                          const std::vector<syncer_actor>& ss,
                                                          const std::vector<replica_ptr>& reps) {
  start_all(fx, ss);
  fx.run();
  REQUIRE(state_of(ss[0]).stats.rounds == 1);
  fx.self->send_exit(ss[2], caf::exit_reason::kill);
  fx.run();
  std::vector<caf::strong_actor_ptr> survivors{caf::actor_cast<caf::strong_actor_ptr>(ss[0]),
                                               caf::actor_cast<caf::strong_actor_ptr>(ss[1])};
  std::vector<std::vector<float>> before{values(reps[0]), values(reps[1])};
  for (std::uint32_t r = 0; r < 2; ++r)
    fx.self->send(ss[r], peers_atom::value, std::uint32_t{1}, r, survivors);
  fx.run();
  fx.advance(std::chrono::seconds(1)); // the pause before round 2
  fx.run();
  REQUIRE(state_of(ss[0]).generation == 1);
  REQUIRE(state_of(ss[0]).stats.rounds == 2);
  REQUIRE(state_of(ss[1]).stats.rounds == 2);
  return before;
}

} // namespace syncer_test
