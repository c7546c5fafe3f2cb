#pragma once
// An embedding shard's own CPR checkpoints (recovery.mode=partial; DESIGN.md
// section 11, Maeng et al. MLSys'21). Unlike a cut (embedding_shard_cut.hpp),
// each shard saves on its own clock, with no coordination: partial recovery
// accepts that a restarted shard is older than the rest of the model.
//
// - The first applied push arms a timer (tick_atom, cfg.interval on the actor
//   clock: virtual under sim.clock=virtual). At each tick the shard saves
//   the rows its policy chooses (checkpoint/cpr_policy.hpp) into its folder
//   (checkpoint/cpr_files.hpp). The handler copies the rows out and the
//   policy forgets them at the copy (checkpoint::row_chooser::begin_save),
//   so updates during the write count for the next save; the file is
//   written off the handler (cpr_background, actors/off_handler.hpp: by a
//   thread while the shard goes on serving, on the discrete-event engine
//   within the handler, charged bytes / checkpoint.storage-gbps for the
//   store); a tick while a save is in flight waits for the next one. The
//   timer re-arms only while
//   pushes keep coming, so an idle cluster has no events.
// - A restarted shard (spawned with the same config) answers recover_atom
//   by loading its chain over its initial rows (charged the same way), and
//   replies when it is ready; until then its mailbox holds the requests.
//   With no chain yet it keeps its initial rows: every update is lost.
// - A shard that begins from a resumed checkpoint's rows (save_at_start)
//   sends itself a tick when it starts (CAF runs the spawn function at the
//   actor's first scheduling, so requests already in its mailbox come
//   first; the save takes the rows as they are then) and saves every row at
//   it (a full save, counted and charged as any other).
//
// The counters live outside the actor (cpr_counters), so they survive the
// shard that is killed: the simulation's observer, not part of the protocol.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <caf/fwd.hpp>
#include <caf/timespan.hpp>

#include "checkpoint/cpr_files.hpp"
#include "checkpoint/cpr_policy.hpp"
#include "messages/messages.hpp"

namespace actors {

struct cpr_counters {
  std::atomic<std::uint64_t> saves{0}, full_saves{0}, rows{0}, bytes{0}, save_ns{0};
  std::atomic<std::uint64_t> loads{0}, load_bytes{0}, load_ns{0};
  std::atomic<std::uint64_t> tracking_bytes{0}; // the largest policy bookkeeping of a shard
  std::atomic<std::uint64_t> failed_saves{0};
};

struct shard_cpr_config {
  std::string folder; // this shard's (CHECKPOINT_DIR/cpr/embedding-S); empty: off
  checkpoint::cpr_policy policy = checkpoint::cpr_policy::full;
  double fraction = 0.25;
  std::uint64_t full_every = 4;
  std::size_t ssu_sample = 16384;
  caf::timespan interval{std::chrono::seconds(1)};
  double storage_gbps = 0.5; // GB/s, charged under the virtual clock
  // recovery.mode=full: a cut's file is charged bytes / storage_gbps too
  // (virtual clock), so cuts and CPR saves compare.
  bool charge_cuts = false;
  // The shard begins from rows that its initial rows cannot give back (a
  // resumed run's): it saves them all before it serves anything, so that a
  // restart before its first periodic save reloads them.
  bool save_at_start = false;
  std::shared_ptr<cpr_counters> counters;
};

// A save written by a thread while the shard goes on serving (where the
// fabric lets threads send: the wall clock). The thread fills the outcome,
// then sends the shard done_atom, save_atom; the destructor joins it.
struct cpr_background {
  checkpoint::row_chooser::taken taken; // what the policy forgot at the gather
  bool base = false;                    // the save_at_start save (no policy step)
  std::thread thread;
  // The outcome, written by the thread before its message.
  bool ok = false;
  checkpoint::cpr_save_info info;
  std::string err;
  std::uint64_t ns = 0; // the store's time
  ~cpr_background() {
    if (thread.joinable())
      thread.join();
  }
};

// The shard's CPR state (in embedding_shard_state).
struct shard_cpr {
  std::optional<checkpoint::row_chooser> chooser;
  std::unique_ptr<cpr_background> writing; // the save in flight, if any
  std::uint64_t next_seq = 0;
  bool armed = false; // a tick is on its way
  bool base_due = false; // save_at_start: the first tick saves everything
};

} // namespace actors
