#pragma once
// shadow_syncer: one per trainer; synchronises the trainer's dense replica
// (hogwild_replica) with the other trainers, never blocking its workers.
//
// Rounds. A round snapshots the live replica (a copy while the workers keep
// writing), synchronises, and merges element-wise into the live buffer:
// - EASGD (s-easgd, fr-easgd): one exchange request per dense shard range, all
//   sent at once, carrying the replica's range; each reply d is applied in
//   place, w -= d. The round completes with the last reply.
// - MA / BMUF (s-ma, s-bmuf, fr-ma, fr-bmuf): chunked ring all-reduce of the
//   snapshot among the N syncers (ring_allreduce.hpp), avg = sum / N; MA's
//   target is avg, BMUF's comes from model::bmuf_step on identical copies of
//   w_g and Delta in every syncer; then model::merge(cfg.merge, ...). With
//   N == 1 the all-reduce is the identity and sends nothing. With dct.dp a
//   sparse all-gather of thresholded changes replaces the all-reduce
//   (shadow_syncer_dct_ring.cpp; EASGD's DCT: shadow_syncer_easgd.cpp).
// Shadow methods run rounds back to back after start_atom, with an optional
// pause of min_pause between them (a delayed tick_atom), each on a replica
// that moved min_gap_batches batches since the last one started: until then
// the syncer waits, and the worker whose batch completes the gap sends it
// wake_atom (hogwild_replica::claim_wake). `none` never runs one.
//
// Foreground protocol (fr-*; the same request also works for shadow methods):
// - sync_atom is answered with the number of the first round that STARTED
//   after the request arrived, once that round has completed; requests that
//   arrive while a round runs coalesce into the next round. With no request
//   no round runs. For ring methods the ring is the barrier: a round started
//   here completes only when every syncer has started it.
// - end_atom (this trainer's workers are done): a ring syncer then runs rounds
//   back to back (free-running) so the other trainers' requests still complete.
//   EASGD needs nothing.
// - `none`, or after the stop reply: sync_atom is answered at once with the
//   rounds completed so far.
//
// Stop protocol (stop_atom, last_round -> sync_stats):
// - Ring methods: the coordinator asks every syncer for stats_atom and sends
//   all of them the same last_round = max(rounds completed) + 1. Completed
//   counts of ring members differ by at most one, so each member can reach
//   last_round; a syncer keeps running rounds (shadow or not, pause included)
//   until rounds >= last_round, then replies. A round in progress beyond
//   last_round is abandoned unmerged (the others no longer need it).
// - EASGD and none: last_round is ignored; the in-flight round (if any) is
//   finished, then the reply is sent.
// - FR requests still waiting when the reply goes are answered with the rounds
//   completed. After the reply no round starts and ring chunks are ignored.
// - The runtime must not terminate ring members before ALL of them have
//   replied to stop: a ring peer going down before stop arrived here is an
//   error (unless cfg.reform_on_loss), and during the stop it is one if this
//   syncer still waits for a chunk from its previous ring member.
//
// Hold protocol (checkpoint cuts, cluster/cluster_cut.hpp; hold_atom,
// last_round -> sync_hold, then resume_atom): the same rule as the stop for
// which rounds still run (ring: up to last_round; EASGD: the one in flight),
// then no round starts until resume. A ring's syncers must hold at one
// common round, but a shadow syncer may have run past any round chosen from
// their counts before the hold arrives. So the coordinator first sends
// aim(R) to every syncer: it starts no round beyond max(R, the round in
// flight) and replies that round at once. After this first aim no syncer
// starts a round beyond its own reply, so the coordinator aims them all at
// the largest reply, which every one then gives, and sends hold(that round). The reply carries the rounds and, for BMUF, w_g and Delta. Shadow
// pacing (min_gap_batches) is off while holding: the workers are parked. FR
// requests arriving while held wait for the resume.
//
// Re-forming the ring (multi-node, cfg.reform_on_loss): a ring peer that goes
// down before the stop is only logged; the runtime then sends
// peers_atom(generation, rank, survivors) to every surviving syncer. The round
// in flight is abandoned unmerged, the ring restarts with the survivors, and
// round numbers restart at 1 in the new generation (ring chunks carry their
// generation; older ones are dropped, newer ones kept until the re-form
// arrives). stats_atom and the stop's last_round count rounds of the current
// generation, so the stop protocol above holds among the survivors; sync_stats
// still counts every round completed. BMUF caveat: a survivor that completed
// the abandoned round moved its w_g and Delta one block further than one that
// did not; each continues from its own.
//
// Failures: every request has cfg.timeout. A timeout, a dense shard going down
// (request error or DOWN message; shards and ring peers are monitored), or a
// protocol violation is logged (spdlog::error) and the actor quits with a
// messages::errc error (request_timeout, shard_down, trainer_down,
// protocol_mismatch, bad_request), after failing every pending promise with it.
// Ring chunks are one-way sends, without a timeout: a ring member that is
// alive but stuck shows up only as a DOWN (remote: middleman heartbeats).
// A config that does not fit the replica quits at spawn with bad_request.
// A syncer holds strong handles to its dense shards and ring peers: the
// runtime ends it with an exit message (the trainer does), never by dropping it.
//
// The simulated network (cluster.mode=simulated with net.enabled) delays the
// syncer's exchanges, replies and ring chunks in its actor system's transport
// (sim/network_model.hpp); round timing, FR waits and the sync gap
// therefore include network time without the syncer knowing of it.
//
// Metrics (sync_stats): rounds completed, payload bytes of the dense_range and
// ring_chunk values this syncer sent, wall seconds inside rounds, and
// replica->batches at the end of each round (the sync gap).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/authority.hpp"
#include "actors/hogwild_replica.hpp"
#include "actors/interfaces.hpp"
#include "actors/work.hpp"
#include "actors/ring_allreduce.hpp"
#include "actors/sparse_allgather.hpp"
#include "actors/syncer_families.hpp"
#include "actors/syncer_policy.hpp"
#include "messages/errors.hpp"
#include "model/dct_sync.hpp"
#include "model/sync_rules.hpp"

namespace actors {

struct syncer_config {
  std::uint32_t trainer = 0, num_trainers = 1;
  model::sync_algorithm algorithm = model::sync_algorithm::s_easgd;
  model::merge_mode merge = model::merge_mode::delta;
  model::bmuf_params bmuf;                  // eta, zeta, nesterov
  std::chrono::milliseconds min_pause{0};
  // Shadow methods: start a round only after the trainer completed this many
  // batches since the previous round started (0 = back to back regardless).
  std::uint64_t min_gap_batches = 0;   // pause between shadow rounds (0: none)
  std::chrono::milliseconds timeout{30000}; // every request's timeout
  bool reform_on_loss = false; // a lost ring peer waits for a re-form instead of failing
  replica_ptr replica;                      // the trainer's hogwild_replica
  std::vector<dense_shard_actor> dense_shards; // EASGD: one per range
  std::vector<model::range> dense_ranges;      // EASGD: [offset, size) of each shard
  model::dct_settings dct;                     // dct.dp: EASGD exchanges through DCT
  // dct.dp: the dense shards' centre at spawn (the whole replica's length),
  // where both pictures of the replica start; empty: zeros, and the first
  // round sends every entry. It must be the shards' dense_shard_config::initial.
  std::vector<float> dct_origin;
  // BMUF: initial w_g; Delta starts at 0. Empty: the replica at spawn, which is
  // right only when every trainer starts from the same parameters (it must
  // be identical in all syncers).
  std::vector<float> initial;
  std::vector<float> initial_momentum; // BMUF: Delta at spawn (resume); empty: 0
  // Optional: stats.bytes_sent mirrored here as it grows (live progress).
  std::shared_ptr<std::atomic<std::uint64_t>> sent_bytes;
  // Who may send what (multi-node: the node agent's plan, via the trainer).
  authority who;
};

// syncer_phase and round_phase, the syncer's two state machines: syncer_policy.hpp.

// The syncer's state; the logic lives in its member functions (.cpp).
struct syncer_state {
  static inline const char* name = "shadow-syncer";
  using promise = caf::typed_response_promise<std::uint64_t>;

  syncer_actor::stateful_pointer<syncer_state> self = nullptr;
  syncer_config cfg;
  messages::sync_stats stats;

  // Lifecycle.
  syncer_phase phase = syncer_phase::created;
  round_phase round = round_phase::idle;
  bool pause_due = false; // a round completed; shadow: wait min_pause first
  bool awaiting_batch = false; // shadow pacing: a worker's wake_atom is due (round: timer)
  std::optional<std::uint64_t> stop_after; // last_round of a pending stop
  bool started() const { return phase == syncer_phase::running || phase == syncer_phase::ended; }
  bool free_running() const { return phase == syncer_phase::ended; } // FR ring: serve the others
  bool stopped() const { return phase == syncer_phase::stopped; }
  bool in_round() const { return round == round_phase::in_round; }
  // The transitions named above.
  void on_start();
  void on_end();
  std::vector<caf::typed_response_promise<messages::sync_stats>> stop_promises;
  // Checkpoint hold (shadow_syncer_hold.cpp): the last round before the hold
  // and the hold replies waiting for it.
  std::optional<std::uint64_t> hold_after;
  std::vector<caf::typed_response_promise<messages::sync_hold>> hold_promises;
  std::uint32_t generation = 0;   // ring membership (re-forms count up)
  std::uint64_t generation_base = 0; // stats.rounds when the generation began

  // FR requests: waiting for a round to start, and served by the current one.
  std::vector<promise> waiting_next, waiting_current;
  role_time round_start;

  // Each sync family's own state (syncer_families.hpp).
  easgd_family easgd;
  bmuf_family bmuf;
  dct_ring_family dring;

  // Ring (MA / BMUF).
  std::vector<syncer_actor> peers; // ring order
  syncer_actor next, prev;
  bool prev_down = false;
  std::unique_ptr<ring_allreduce> ring;
  std::vector<messages::ring_chunk> early_chunks; // arrived before peers_atom
  // Bound on early_chunks: two rounds of a ring of every trainer.
  std::size_t max_early_chunks() const {
    return ring_allreduce::max_early_chunks(cfg.num_trainers);
  }
  std::vector<float> snapshot, reduced; // [replica size]
  std::uint64_t batches_at_start = 0;   // replica->batches when the last round started

  // DCT for MA/BMUF (dct.dp): the state is `dring`.
  bool dct_ring() const { return model::uses_ring(cfg.algorithm) && cfg.dct.dp; }
  void on_ring_sparse(messages::ring_sparse&& piece);

  // Checks cfg against the replica; an error means the actor must quit.
  caf::error init();
  caf::error set_peers(std::uint32_t rank, const std::vector<caf::strong_actor_ptr>& all);
  // Logs a refused peer value with the current message's sender.
  void refuse(const std::string& what) const;
  caf::error reform(std::uint32_t gen, std::uint32_t rank,
                    const std::vector<caf::strong_actor_ptr>& survivors);
  // Rounds completed in the current ring generation (all of them without re-forms).
  std::uint64_t ring_rounds() const { return stats.rounds - generation_base; }
  void on_sync(promise p);
  void on_stop(std::uint64_t last_round);
  // Hold for a checkpoint cut: like the stop, but it ends with resume.
  void on_hold(std::uint64_t last_round,
               caf::typed_response_promise<messages::sync_hold> p);
  // Ring methods before a cut: no round beyond last_round or the one in
  // flight; returns the round it will hold at.
  std::uint64_t on_aim(std::uint64_t last_round);
  void on_resume();
  void on_ring(messages::ring_chunk&& chunk);
  void on_down(const caf::down_msg& dm);
  // Starts the next round, schedules the pause, or completes the stop.
  void advance();
  // Logs (spdlog::error), fails every pending promise with err, quits with err.
  void fail(caf::error err);
  // The same without the error line: the runtime is stopping the cluster.
  void end(caf::error err);
  void fail(messages::errc code, const std::string& what); // what: after "<name> <trainer>: "

private:
  bool ring_method() const { return model::uses_ring(cfg.algorithm); }
  caf::error join_ring(std::uint32_t rank, const std::vector<caf::strong_actor_ptr>& all);
  syncer_view view() const; // the flags the policy decides on (syncer_policy.hpp)
  void start_round();
  void start_easgd();
  void on_exchange_reply(std::size_t shard, messages::dense_range& d);
  void on_sparse_reply(std::size_t shard, messages::sparse_range& r);
  // A failed exchange request: quits naming the dense shard.
  void on_exchange_error(std::size_t shard, caf::error& err);
  void start_ring();
  void check_ring();
  // A ring message (ring_chunk, ring_sparse) for `machine` (the ring or the
  // gather): dropped when of a re-formed ring, kept in `early` (at most
  // `bound`, else a protocol error) while its ring is not formed here, else
  // received, and the round checked.
  template <class Msg, class Machine>
  void deliver_ring(Machine* machine, std::vector<Msg>& early, std::size_t bound, Msg&& m,
                    const char* what);
  // After a (re-)form: the early messages of this generation go to
  // `machine`; a later generation's stay. Returns a protocol error.
  template <class Msg, class Machine>
  caf::error replay_early(Machine& machine, std::vector<Msg>& early);
  caf::error init_dct_ring();
  caf::error join_dct_ring(std::uint32_t rank, std::uint32_t n);
  void start_dct_ring();
  void check_dct_ring();
  void start_dct_reduce(); // dct.dp-ring=reduce
  void check_dct_reduce();
  void finish_round();
  void finish_stop();
  void finish_hold();
  std::string who() const;
};

syncer_actor::behavior_type shadow_syncer(syncer_actor::stateful_pointer<syncer_state> self,
                                          syncer_config cfg);

} // namespace actors
