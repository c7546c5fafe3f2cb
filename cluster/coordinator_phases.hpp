#pragma once
// The coordinator's protocol as an explicit state machine: its phases, which
// trainers it awaits, and what a trainer's loss does. Pure bookkeeping over
// trainer indices: no CAF, no clock, so the protocol is walked step by step
// in tests (tests/cluster/coordinator_phases_test.cpp). The coordinator
// actor (coordinator_actor.hpp) sends what a phase asks,
// feeds the replies and DOWNs in, and sends the ring wirings it returns.
//
// The phases, in order (advance() moves one step, only once the current one
// is complete and the run has not ended):
//   idle    nothing sent yet;
//   wire    ask every trainer for its syncer (peers); then the first ring
//           (ring methods: MA, BMUF) over the trainers still live;
//   shards  every embedding shard answers a readiness lookup (the driver's);
//           training time starts after it;
//   train   start every trainer; each replies when its data is done;
//   drain   the roles the fault injector killed send their DOWNs;
//   rounds  ask every trainer its sync round (the coordinated stop begins);
//   stop    send stop(last round) to every trainer, collect the reports;
//   report  the reports are checked, metrics and evaluation (the driver's);
//   done.
//
// A trainer lost (tolerate_trainer_loss; else the loss is the run's error):
// - before the coordinated stop it leaves the job: it is no longer awaited,
//   and after the first wiring the ring is re-formed among the survivors
//   with the next generation (EASGD and `none`: nothing to re-form, the
//   dense shards simply lose a client);
// - losing every trainer, or one during the coordinated stop (rounds,
//   stop), ends the run with an error.
// The first failure wins; later ones do not overwrite it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runtime {

enum class coordinator_phase { idle, wire, shards, train, drain, rounds, stop, report, done };

const char* to_string(coordinator_phase p);

// Whether the phase sends a request to every live trainer and awaits a reply
// from each (wire, train, rounds, stop).
bool asks_trainers(coordinator_phase p);

// A ring for the driver to send to the syncers: members are trainer indices
// in rank order. Generation 0 is the first wiring (peers(rank, all));
// re-forms count up from 1 (peers(generation, rank, survivors)).
struct ring_wiring {
  std::uint32_t generation = 0;
  std::vector<std::size_t> members;
};

class coordinator_phases {
public:
  // names: one per trainer (for messages); ring: the method syncs over a
  // ring of syncers.
  coordinator_phases(std::vector<std::string> names, bool ring, bool tolerate_trainer_loss);

  coordinator_phase phase() const { return phase_; }

  // Whether advance() may run: the current phase is complete, the run has
  // not ended and it is not done.
  bool can_advance() const;
  // The next phase. Returns the trainers to ask in it (the live ones, in
  // order; empty for a phase that asks none). Calling it when
  // !can_advance() is a bug (SS_CHECK).
  std::vector<std::size_t> advance();

  // Trainer i's reply in the current phase. False, and nothing changes, when
  // it is not awaited: a phase that asks none, a lost trainer, an index out
  // of range, or a second reply.
  bool reply(std::size_t i);
  // Every live trainer has answered (always true in phases that ask none).
  bool complete() const;
  // The live trainers not answered yet, in order, and their names ("a, b").
  std::vector<std::size_t> pending() const;
  std::string missing() const;

  // Once `wire` is complete: the first ring (ring methods), over the
  // trainers live then; the driver sends it before it advances. Nothing for
  // EASGD and `none`.
  std::optional<ring_wiring> first_ring() const;
  // After `rounds` is complete, from the trainers' replies (rounds[i]:
  // trainer i's sync round): the last round every ring member finishes
  // before it stops, max over the live trainers' rounds + 1; 0 for methods
  // without a ring.
  std::uint64_t last_round(const std::vector<std::uint64_t>& rounds) const;

  // Trainer i went down (why: the reason, at: seconds since training
  // started). Returns the re-formed ring to send, if there is one.
  std::optional<ring_wiring> lose_trainer(std::size_t i, const std::string& why, double at);

  // The run's error; the first one stays.
  void fail(std::string why);
  const std::optional<std::string>& failure() const { return failure_; }

  const std::vector<bool>& alive() const { return alive_; }
  std::size_t survivors() const;
  // "trainer-1 lost after 2.5 s (why)", in the order they were lost.
  const std::vector<std::string>& lost() const { return lost_; }
  // The coordinated stop has begun: a loss now is an error.
  bool stopping() const;

private:
  std::vector<std::size_t> live() const;

  std::vector<std::string> names_;
  bool ring_, tolerate_;
  coordinator_phase phase_ = coordinator_phase::idle;
  std::vector<bool> alive_, got_;
  bool wired_ = false; // the first ring went out
  std::uint32_t generation_ = 0;
  std::optional<std::string> failure_;
  std::vector<std::string> lost_;
};

} // namespace runtime
