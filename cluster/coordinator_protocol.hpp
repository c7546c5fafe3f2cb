#pragma once
// The coordinator actor's state (coordinator_actor.hpp): the phases of
// coordinator_phases.hpp carried out with CAF. coordinator_protocol.cpp
// holds the behaviour and walks the phases (requests, continuations, the
// progress poll, the hooks); coordinator_cuts.cpp runs the checkpoint cuts
// the polls ask for (cut_run.hpp); coordinator_losses.cpp handles DOWNs: a
// lost trainer, a lost shard or the job's end, and the rollback of full
// recovery; coordinator_restarts.cpp restarts a lost shard (partial
// recovery).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "model/check.hpp"
#include "cluster/coordinator_actor.hpp"
#include "cluster/coordinator_phases.hpp"
#include "cluster/cut_run.hpp"

namespace runtime {

class coordinator_protocol;

struct coordinator_state {
  std::unique_ptr<coordinator_protocol> protocol; // (defined below)
  static inline const char* name = "coordinator";
};

using coordinator_self = coordinator_actor::stateful_pointer<coordinator_state>;

class coordinator_protocol {
public:
  coordinator_protocol(coordinator_self self, coordinator_setup setup);

  // The handlers.
  void begin();
  void on_poll(std::uint64_t generation);
  void on_deadline(std::uint64_t generation);
  void on_finish();
  void on_down_msg(caf::down_msg& dm);

private:
  // What a wait lets in.
  enum class wait {
    none,       // the phases go on
    downs,      // drain: the killed roles' DOWNs (awaited_)
    shard_down, // a trainer's shard_down error: the shard's own DOWN names the cause
    finishing,  // the end: the DOWNs already in the mailbox, then messages::finish_atom
  };

  const cluster_handles& c() const { return *setup_.cluster; }
  const train_config& cfg() const { return *setup_.cfg; }
  caf::actor_clock::time_point now() const { return self_->clock().now(); }
  double since(caf::actor_clock::time_point t) const {
    return std::chrono::duration<double>(now() - t).count();
  }
  // The protocol ended (failure or rollback), or a wait holds replies back.
  bool over() const { return ended_ || wait_ != wait::none; }
  // A cut is in flight: no poll and no next phase until it ends.
  bool cutting() const { return static_cast<bool>(cut_); }
  // A restarted shard is reloading: no poll and no next phase until it is back.
  bool restarting() const { return restarting_ > 0; }
  bool ended() const { return phases_.failure() || rollback_; }

  // -- phases (coordinator_protocol.cpp) --
  // What the event just handled leaves: the end, a rollback, or the next
  // phase when the current one is complete.
  void after_event();
  void next_phase();
  std::vector<std::size_t> advance_to(coordinator_phase p); // the trainers to ask
  void enter(coordinator_phase p);                           // a phase that asks none
  // Moves to phase p, which asks the trainers: sends xs to every live one;
  // each reply lands in replies[i].
  template <class Reply, class... Ts>
  void ask(coordinator_phase p, caf::duration timeout, std::vector<Reply>& replies, Ts... xs) {
    SS_CHECK(asks_trainers(p), "ask runs a phase that asks the trainers");
    replies.assign(c().trainers.size(), Reply{});
    local_done_ = true;
    for (auto i : advance_to(p))
      self_->request(c().trainers[i], timeout, xs...)
        .then(
          [this, i, &replies](Reply& r) {
            if (over())
              return;
            if (phases_.reply(i))
              replies[i] = std::move(r);
            after_event();
          },
          [this, i](caf::error& e) { on_ask_error(i, e); });
  }
  void on_ask_error(std::size_t i, const caf::error& err);
  void ask_shard(std::size_t s); // readiness, one shard after the other
  void start_training();
  void arm_poll();
  void poll_from(std::size_t i, messages::progress_report total);
  // setup_.poll_in_cuts: a poll while a cut is in flight, for the count alone
  // (last_examples_, what a rollback redoes); the next one once it is in.
  void poll_quietly();
  // The timeout of a poll's stats request: cluster.timeout, at most 1 s.
  std::chrono::milliseconds poll_timeout() const;
  void drain(std::vector<caf::actor_addr> killed);
  void arm_deadline(std::chrono::milliseconds d);
  // Rollback mode: a trainer reported its shard lost (errc::shard_down). The
  // shard's own DOWN names the cause (which of the two comes first is a
  // race); waits for it up to cluster.timeout, then rolls back for `why`.
  // False when a shard's loss is already the cause.
  bool await_shard_down(std::string why);
  // Asks the caller (a hook) and awaits its answer, of types Answer...;
  // then `then` with it, and the event's end.
  template <class... Answer, class F, class... Ts>
  void hook(F then, Ts... xs) {
    busy_ = true;
    self_->request(setup_.caller, caf::infinite, xs...)
      .await(
        [this, then](Answer&... answer) mutable {
          busy_ = false;
          then(answer...);
          after_event();
        },
        [this](caf::error& e) {
          busy_ = false;
          phases_.fail("the coordinator's caller failed a request: " + self_->system().render(e));
          after_event();
        });
  }
  void end(); // the outcome to the caller; quits
  // A failed progress or cut hook: the job's error, or a rollback under
  // full recovery.
  void hook_failed(std::string e);

  // -- cuts (coordinator_cuts.cpp) --
  void start_cut();
  void cut_ended(std::optional<std::string> failure);
  void retake_cut(); // a cut voided by a shard's restart, again once it is back

  // -- losses (coordinator_losses.cpp) --
  void monitor_all();
  void monitor(const caf::actor_addr& a);
  void on_down(const caf::down_msg& dm);
  void take_down(caf::down_msg& dm); // on_down_msg's work, without after_event
  std::string describe(const caf::down_msg& dm) const; // "shard-1 is down (why)"
  // A shard's or an essential node's DOWN (the cause a trainer's shard_down
  // error waits for).
  bool names_cause(const caf::down_msg& dm) const;
  // A loss the job survives: a trainer's (not one that went down because
  // it lost a shard), or a non-essential node's (its trainers'), where
  // trainer losses are tolerated; never under full recovery, which rolls
  // every loss back.
  bool survivable(const caf::down_msg& dm) const;
  void lose_trainer(std::size_t i, const std::string& why);
  void note_loss(const std::string& why, std::optional<std::size_t> shard);
  void finish_soon(); // rollback: the DOWNs in hand first
  void send_ring(const ring_wiring& w);

  // -- shard restarts (coordinator_restarts.cpp; partial recovery) --
  void restart(std::size_t shard, const std::string& why); // the caller places it
  void reload(std::size_t shard, const std::string& why, caf::actor_clock::time_point down);
  void rebind(std::size_t shard); // the restarted shard to the trainers
  void restart_failed(std::string e);
  bool drained() const;           // every awaited DOWN is in

  coordinator_self self_;
  coordinator_setup setup_;
  coordinator_phases phases_;
  std::optional<shard_loss> rollback_;
  std::optional<std::string> pending_loss_; // a failed poll hook, under full recovery
  bool ended_ = false, busy_ = false, local_done_ = true;
  wait wait_ = wait::none;
  std::uint64_t poll_gen_ = 0, wait_gen_ = 0;
  std::size_t restarting_ = 0;             // shard restarts in flight
  bool retake_ = false;                    // a voided cut to take again
  std::string wait_error_;                 // shard_down: the trainer's error
  std::vector<caf::down_msg> later_;       // shard_down: other DOWNs meanwhile
  std::vector<caf::actor_addr> awaited_;   // drain: the killed roles
  std::vector<caf::actor_addr> downs_;     // every DOWN handled
  std::vector<caf::actor_addr> monitored_;
  std::shared_ptr<cut_run> cut_;           // the cut in flight
  std::vector<caf::down_msg> cut_downs_;   // DOWNs that aborted it, handled after it
  std::uint64_t last_examples_ = 0;        // the newest poll's
  caf::actor_clock::time_point t0_{}, train_t0_{};
  double seconds_ = 0;
  std::vector<caf::strong_actor_ptr> syncers_;
  std::vector<messages::worker_stats> done_;
  std::vector<std::uint64_t> rounds_;
  std::vector<messages::trainer_report> reports_;
};

} // namespace runtime
