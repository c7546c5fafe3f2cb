#pragma once
// The coordinator's driver (runtime/coordinator.cpp runs the protocol over
// it): it carries out the phases of coordinator_phases.hpp with CAF, sending
// what a phase asks, feeding the replies and DOWNs into the state machine
// and sending the ring wirings it returns, and decides what a lost role
// other than a trainer does (an error, a shard restarted (partial recovery)
// or a rollback (full recovery)).
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "messages/errors.hpp"
#include "model/check.hpp"
#include "runtime/coordination.hpp"
#include "runtime/coordinator_phases.hpp"
#include "runtime/train_config.hpp"

namespace runtime {

class coordinator_run {
public:
  coordinator_run(caf::blocking_actor* self, const train_config& cfg, const cluster_handles& c,
                  const coordinator_options& opts)
    : phases(c.trainer_names, model::uses_ring(cfg.sync.algorithm), opts.tolerate_trainer_loss),
      recovery(self, c, opts.restart_shard), self_(self), cfg_(cfg), c_(c), opts_(opts) {}

  coordinator_phases phases;          // the protocol's state
  std::optional<shard_loss> rollback; // opts.rollback_on_shard_loss
  std::uint64_t last_examples = 0;    // the newest progress poll's
  // The protocol stops here: an error, or a loss for a rollback.
  bool ended() const { return phases.failure() || rollback; }
  const std::optional<std::string>& failure() const { return phases.failure(); }
  const std::vector<bool>& alive() const { return phases.alive(); }

  // Moves to phase p, the next one (one that asks no trainer: shards, drain,
  // report, done).
  void enter(coordinator_phase p);

  // rollback_on_shard_loss: any role lost (or a trainer failing, or a cut
  // failing, with it) rolls the cluster back. The shard's loss names it when
  // it is among them.
  void note_loss(const std::string& why, std::optional<std::size_t> shard);

  // After a loss: the DOWNs already on their way (the lost shard's, when a
  // trainer's failure came first).
  void take_downs();
  // Handles DOWNs until each of `roles` has sent one (they were killed), or
  // fails after `timeout`.
  void await_downs(const std::vector<caf::actor_addr>& roles, std::chrono::milliseconds timeout);

  shard_recovery recovery;

  void monitor_all();

  // Moves to phase p, the next one, which asks the trainers: sends xs to
  // every live trainer and collects one reply from each, in trainer order
  // (replies[i] stays default for trainers lost on the way).
  template <class Reply, class... Ts>
  void ask_all(coordinator_phase p, std::vector<Reply>& replies,
               std::chrono::milliseconds timeout, const std::function<void()>& on_idle,
               Ts... xs) {
    SS_CHECK(asks_trainers(p), "ask_all runs a phase that asks the trainers");
    replies.assign(c_.trainers.size(), Reply{});
    for (auto i : advance_to(p))
      self_->send(c_.trainers[i], xs...);
    auto deadline = self_->clock().now() + timeout;
    while (!ended() && !phases.complete()) {
      self_->receive(
        [&](Reply& r) {
          auto i = trainer_index(self_->current_sender());
          if (phases.reply(i))
            replies[i] = std::move(r);
        },
        [&](caf::error& err) {
          auto i = trainer_index(self_->current_sender());
          if (opts_.rollback_on_shard_loss) {
            if (i < c_.trainers.size()) // (else a trainer of an attempt rolled back)
              note_loss(c_.trainer_names[i] + ": " + self_->system().render(err), std::nullopt);
            return;
          }
          auto why = (i < c_.trainers.size() ? c_.trainer_names[i] : std::string{"a trainer"}) +
                     ": " + self_->system().render(err);
          if (err.category() == messages::error_category &&
              err.code() == static_cast<std::uint8_t>(messages::errc::shard_down))
            await_shard_down(); // the shard's own DOWN (or its node's) names the cause
          phases.fail(std::move(why));
        },
        [&](caf::down_msg& dm) { on_down(dm); },
        caf::after(opts_.poll_interval) >> [&] {
          if (on_idle)
            on_idle();
          if (self_->clock().now() > deadline)
            phases.fail("no reply from " + phases.missing() + " within " +
                        std::to_string(timeout.count()) + " ms");
        });
    }
  }

  // Waits until every embedding shard answers (a lookup of no keys): its
  // tables are initialised. The wall clock starts after this, as the
  // sequential engine's starts after its tables' initialisation.
  void await_shards(std::chrono::milliseconds timeout);

  // The first ring, once `wire` is complete: every live syncer gets the
  // live ones in trainer order (ring methods).
  void wire_ring(const std::vector<caf::strong_actor_ptr>& syncers);

private:
  // A trainer failed because a shard went down: handles DOWNs for up to
  // cluster.timeout until one sets the failure (a shard, or an essential
  // node: the root cause, named). Which of the two reports comes first is a
  // race (with direct links between nodes, the trainer's node often sees
  // the shard's node die before the coordinator does).
  void await_shard_down();
  std::vector<std::size_t> advance_to(coordinator_phase p); // the trainers to ask
  std::size_t trainer_index(const caf::strong_actor_ptr& who) const; // size(): none

  template <class Handles>
  static std::size_t index_of(const Handles& hs, const caf::actor_addr& a) {
    for (std::size_t i = 0; i < hs.size(); ++i)
      if (hs[i].address() == a)
        return i;
    return hs.size();
  }

  void on_down(const caf::down_msg& dm);
  void lose_trainer(std::size_t i, const std::string& why);
  void send_ring(const ring_wiring& w);

  caf::blocking_actor* self_;
  const train_config& cfg_;
  const cluster_handles& c_;
  const coordinator_options& opts_;
  std::vector<caf::actor_addr> downs_; // every DOWN handled
  std::vector<caf::strong_actor_ptr> syncers_; // per trainer
  std::chrono::steady_clock::time_point t0_{};
};

} // namespace runtime
