#pragma once
// One consistent cut (cluster_cut.hpp) as continuations of the coordinator
// actor: every step is a request answered through .then, so the
// coordinator goes on handling its other messages while the cut is in
// flight, a DOWN above all. Its steps, in order:
//   aim       ring methods (MA, BMUF): each syncer in turn aim(R), two
//             passes at most, until all answer the same round;
//   workers   after a trainer's loss only: each live trainer in turn
//             workers, the handles of its workers;
//   shards    every embedding shard cut(N, FOLDER, W), all at once (each
//             answers once it has aligned and written its file); after a
//             trainer's loss cut(N, FOLDER, the live workers), since a lost
//             trainer's workers never mark and may have ended before;
//   trainers  each live trainer in turn cut(N, last): its cut_report (a
//             lost trainer's is a stand-in: cluster_checkpointer::stand_in);
//   centre    EASGD: each dense shard in turn dump (the centre);
//   resume    every trainer resume; after a failure the cut ends here;
//   files     the shards' answers, then the checkpointer's commit (step 6);
//             multi-node (cluster_checkpointer::fetches_shard_files): the
//             shards kept their files, and a detached thread of the cut
//             fetches each one over the wire into the folder
//             (cluster/shard_fetch.hpp), checks it against the shard's
//             answer and commits, so no handler waits for the disk. The
//             thread holds its inputs by value: a cut that ends first (a
//             node lost) cancels it and the run may end meanwhile.
// A failed step ends the cut with its error, as a blocking cut did (a
// trainer's failure still lets the others be asked, and resume goes out).
//
// lose_shard(s, why): under partial recovery an embedding shard went down
// during the cut and is restarted meanwhile: the cut runs to its end without
// it (no request to it, or its answer ignored) and ends void; the
// coordinator then takes another (coordinator_cuts.cpp).
//
// abort(why): a role went down while the cut was in flight. The cut ends at
// once with "checkpoint: cut N aborted: why": the trainers already asked get
// resume (their syncers were held), and the answers still outstanding are
// ignored when they come. Each cut has a temporary folder of its own
// (DIR/.tmp-.cut-N-PID), which stays after any failure: a live shard may
// still be writing into it; the next commit removes it. (A shard that dies
// holding its cut request never answers: CAF 0.17 sends nothing for a
// dropped promise.)
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include "actors/interfaces.hpp"
#include "checkpoint/store.hpp"
#include "cluster/cluster_cut.hpp"
#include "cluster/shard_fetch.hpp"

namespace runtime {

class cut_run : public std::enable_shared_from_this<cut_run> {
public:
  // Called once, when the cut has ended: its error, or none (committed).
  using done_fn = std::function<void(std::optional<std::string>)>;

  enum class step { idle, aim, workers, shards, trainers, centre, files, done };

  // self: the coordinator actor, which outlives the cut or drops its
  // continuations; syncers: every trainer's, in trainer order (the ring's
  // aim); ck: the checkpointer whose cut this is; lost: per trainer, lost
  // before the cut (empty: none).
  cut_run(actors::coordinator_actor::pointer self, cluster_checkpointer& ck,
          std::vector<caf::strong_actor_ptr> syncers, std::vector<bool> lost, done_fn done);

  void start();
  // Ends the cut in flight with "checkpoint: cut N aborted: why". False
  // when it had already ended.
  bool abort(const std::string& why);
  // Embedding shard s was lost and is being restarted (partial recovery):
  // the cut goes on without it, so that every worker sends its marker and
  // the live shards finish their part, but it cannot commit: it ends "void"
  // (an error) and the coordinator takes a new one once the shard is back.
  // Its answers, if any come, are ignored.
  void lose_shard(std::size_t s, const std::string& why);
  bool voided() const { return static_cast<bool>(void_); }

  step at() const { return step_; }
  std::uint64_t id() const { return id_; }

private:
  const train_config& cfg() const { return ck_.config(); }
  const cluster_handles& c() const { return ck_.cluster(); }
  std::string render(const caf::error& e) const;
  void fail(const std::string& who, const caf::error& e);

  void aim(std::size_t t);
  bool lost_trainer(std::size_t t) const { return t < lost_trainers_.size() && lost_trainers_[t]; }
  bool any_trainer_lost() const {
    return std::find(lost_trainers_.begin(), lost_trainers_.end(), true) != lost_trainers_.end();
  }
  void ask_shards();
  void ask_workers(std::size_t t);
  void send_shard_cuts();
  void ask_trainer(std::size_t t);
  void gather(std::size_t d);
  void resume();
  void shard_answered();
  void files();
  void fetch_and_commit(); // multi-node files step (on a thread: shard_fetch.hpp)
  void finish(std::optional<std::string> failure);

  actors::coordinator_actor::pointer self_;
  cluster_checkpointer& ck_;
  std::vector<caf::strong_actor_ptr> syncers_;
  std::vector<bool> lost_trainers_;
  std::vector<std::string> workers_; // the live trainers' ("ID@NODE"; after a loss)
  done_fn done_;
  step step_ = step::idle;
  std::uint64_t id_ = 0;
  // aim: the pass, the round asked, the answers' range
  int pass_ = 0;
  std::uint64_t target_ = 0, lo_ = 0, hi_ = 0, last_ = 0;
  checkpoint::folder_writer w_;
  bool resumed_ = false, asked_trainers_ = false;
  std::optional<std::string> failure_;
  cut_gathered g_;
  // per shard: its file, or its error
  std::vector<std::optional<messages::shard_cut_file>> files_;
  std::vector<std::optional<caf::error>> shard_errors_;
  std::vector<bool> lost_; // per shard: lost during the cut (lose_shard)
  std::optional<std::string> void_;
  std::size_t shards_in_ = 0;
  std::shared_ptr<cut_fetch_job> fetching_; // the files step's thread, multi-node
};

} // namespace runtime
