// A trainer's children (see trainer.hpp): the reader, the shadow syncer and
// the W Hogwild workers, spawned on the trainer's host around its replica
// and its live_progress, all monitored (as are the embedding shards), and
// stopped whenever the trainer ends.
#include "actors/trainer_children.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/sim_host.hpp"

namespace actors::trainer_children_detail {

void spawn_children(self_ptr self) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  // Every child on the trainer's host (virtual clock: its cores).
  const auto host = cfg.host;
  auto rc = cfg.reader;
  rc.bytes_read = std::shared_ptr<std::atomic<std::uint64_t>>(st.progress, &st.progress->read_bytes);
  st.reader = cfg.spawn_reader ? cfg.spawn_reader(self->system())
                               : spawn_role(self->system(), host, reader, std::move(rc));
  auto sc = cfg.syncer;
  sc.replica = st.replica;
  sc.who = cfg.who;
  // Aliases the trainer's live_progress: the syncer counts its bytes there.
  sc.sent_bytes = std::shared_ptr<std::atomic<std::uint64_t>>(st.progress, &st.progress->sync_bytes);
  st.syncer = cfg.spawn_syncer ? cfg.spawn_syncer(self->system(), sc)
                               : spawn_role(self->system(), host, shadow_syncer, std::move(sc));
  const auto me = caf::actor_cast<trainer_actor>(self);
  for (std::size_t w = 0; w < cfg.workers; ++w) {
    worker_config wc;
    wc.trainer = cfg.trainer;
    wc.worker = static_cast<std::uint32_t>(w);
    wc.arch = cfg.arch;
    wc.dense_opt = cfg.dense_opt;
    wc.examples_before = cfg.reader.resume.served;
    wc.replica = st.replica;
    wc.reader = st.reader;
    wc.shards = cfg.shards;
    wc.syncer = st.syncer;
    wc.algorithm = cfg.syncer.algorithm;
    wc.sync_every = cfg.sync_every;
    wc.timeout = cfg.timeout;
    wc.trainer_handle = me;
    wc.progress = st.progress;
    wc.shard_restarts = cfg.shard_restarts;
    wc.local_rows = cfg.local_rows;
    wc.read_ahead = cfg.read_ahead;
    wc.dynamic = cfg.dynamic;
    wc.mp_residual_rows = cfg.mp_residual_rows;
    wc.who = cfg.who;
    wc.dct = cfg.syncer.dct; // dct.mp: the workers' lookups and pushes (dct.dp: the syncer's)
    st.workers.push_back(cfg.detached_workers ? self->spawn<caf::detached>(hogwild_worker, wc)
                                              : spawn_role(self->system(), host, hogwild_worker, wc));
  }
  st.worker_done.assign(st.workers.size(), 0);
  self->monitor(st.reader);
  self->monitor(st.syncer);
  for (auto& w : st.workers)
    self->monitor(w);
  for (auto& s : cfg.shards)
    self->monitor(s);
  // Whatever ends the trainer ends its children too.
  self->attach_functor([reader = st.reader, syncer = st.syncer, workers = st.workers] {
    caf::anon_send_exit(reader, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(syncer, caf::exit_reason::user_shutdown);
    for (auto& w : workers)
      caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  });
}

} // namespace actors::trainer_children_detail
