// A consistent cut as the coordinator actor's continuations (cut_run.hpp):
//   coordinator -> syncer: aim(R)                        (ring: the round held at)
//   coordinator -> trainer: workers                      (after a trainer's loss)
//   coordinator -> embedding shard: cut(N, FOLDER, W)   (replies when written;
//                  after a trainer's loss W names the live workers, "ID@NODE")
//   coordinator -> trainer: cut(N, last)                 (replies cut_report)
//   coordinator -> dense shard: dump                     (EASGD centre)
//   coordinator -> trainer: resume                       (releases its syncer)
//   coordinator -> every live trainer and shard on an abort: resume, cut(N, resume)
// The files step (the shards' answers, the commit, a multi-node cut's fetch)
// is in cut_run_files.cpp.
#include "cluster/cut_run.hpp"

#include <algorithm>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace runtime {

using namespace messages;

cut_run::cut_run(actors::coordinator_actor::pointer self, cluster_checkpointer& ck,
                 std::vector<caf::strong_actor_ptr> syncers, std::vector<bool> lost,
                 done_fn done)
    : self_(self), ck_(ck), syncers_(std::move(syncers)), lost_trainers_(std::move(lost)),
      done_(std::move(done)) {}

std::string cut_run::render(const caf::error& e) const {
  return self_->system().render(e);
}

void cut_run::fail(const std::string& who, const caf::error& e) {
  if (!failure_)
    failure_ = "checkpoint: " + who + ": " + render(e);
}

void cut_run::start() {
  g_.began = ck_.now();
  id_ = ck_.next_id();
  lost_.assign(c().shards.size(), false);
  // 1. Ring methods: one common round to hold at. EASGD and none: 0 (a
  // syncer holds after the exchange in flight).
  if (model::uses_ring(cfg().sync.algorithm)) {
    step_ = step::aim;
    lo_ = ~std::uint64_t{0};
    aim(0);
  } else {
    ask_shards();
  }
}

// No syncer starts a round beyond its answer, so aiming them all at the
// largest answer of the first pass gets that round from every one in the
// second (see shadow_syncer.hpp); a third pass is never needed.
void cut_run::aim(std::size_t t) {
  while (t < syncers_.size() && lost_trainer(t)) // (out of the re-formed ring)
    ++t;
  if (t == syncers_.size()) {
    target_ = hi_;
    if (lo_ == hi_) {
      last_ = target_;
      return ask_shards();
    }
    if (++pass_ == 2)
      return finish("checkpoint: the ring's syncers did not agree on a round to hold at (last "
                    "aim: round " + std::to_string(target_) + ")");
    lo_ = ~std::uint64_t{0};
    hi_ = 0;
    return aim(0);
  }
  auto me = shared_from_this();
  self_->request(caf::actor_cast<actors::syncer_actor>(syncers_[t]), cfg().cluster.timeout,
                 aim_atom::value, target_)
    .then(
      [me, t](std::uint64_t r) {
        if (me->step_ != step::aim)
          return;
        me->lo_ = std::min(me->lo_, r);
        me->hi_ = std::max(me->hi_, r);
        me->aim(t + 1);
      },
      [me, t](caf::error& e) {
        if (me->step_ == step::aim)
          me->finish("checkpoint: " + me->c().trainer_names[t] + "'s syncer: " + me->render(e));
      });
}

void cut_run::ask_shards() {
  std::string err;
  // A folder of this cut's own (.tmp-.cut-N-PID): an aborted cut's shard
  // may still write into its folder, and its fetching thread removes it on
  // giving up, while the next cut fills its own.
  if (!w_.begin(cfg().checkpoint.dir, ".cut-" + std::to_string(id_), &err))
    return finish("checkpoint: " + err);
  if (any_trainer_lost()) {
    step_ = step::workers;
    return ask_workers(0);
  }
  send_shard_cuts();
}

// After a trainer's loss: the workers the shards align over.
void cut_run::ask_workers(std::size_t t) {
  while (t < c().trainers.size() && lost_trainer(t))
    ++t;
  if (t == c().trainers.size())
    return send_shard_cuts();
  auto me = shared_from_this();
  self_->request(c().trainers[t], cfg().cluster.timeout, workers_atom::value)
    .then(
      [me, t](std::vector<caf::strong_actor_ptr>& ws) {
        if (me->step_ != step::workers)
          return;
        for (const auto& w : ws) {
          if (!w)
            return me->finish("checkpoint: " + me->c().trainer_names[t] +
                              " named a null handle among its workers");
          me->workers_.push_back(caf::to_string(w));
        }
        me->ask_workers(t + 1);
      },
      [me, t](caf::error& e) {
        if (me->step_ == step::workers)
          me->finish("checkpoint: " + me->c().trainer_names[t] + "'s workers: " +
                     me->render(e));
      });
}

void cut_run::send_shard_cuts() {
  // 2. The shards first: they align on the workers' markers.
  step_ = step::shards;
  const auto workers = std::uint32_t(cfg().cluster.trainers * cfg().cluster.workers);
  const bool listed = any_trainer_lost();
  const auto n = c().shards.size();
  files_.assign(n, std::nullopt);
  shard_errors_.assign(n, std::nullopt);
  auto me = shared_from_this();
  for (std::size_t s = 0; s < n; ++s) {
    if (lost_[s]) { // lost before it was asked (lose_shard)
      ++shards_in_;
      continue;
    }
    // (multi-node: "", the shard keeps its file for the fetch)
    const auto folder = ck_.fetches_shard_files() ? std::string{} : w_.folder();
    auto answered = [me, s](shard_cut_file& f) {
      if (me->step_ == step::done || me->lost_[s])
        return;
      me->files_[s] = std::move(f);
      me->shard_answered();
    };
    auto failed = [me, s](caf::error& e) {
      if (me->step_ == step::done || me->lost_[s])
        return;
      me->shard_errors_[s] = std::move(e);
      me->shard_answered();
    };
    if (listed)
      self_->request(c().shards[s], cfg().cluster.timeout, cut_atom::value, id_, folder, workers_)
        .then(answered, failed);
    else
      self_->request(c().shards[s], cfg().cluster.timeout, cut_atom::value, id_, folder, workers)
        .then(answered, failed);
  }
  // 3. The trainers, one after the other.
  step_ = step::trainers;
  asked_trainers_ = true;
  g_.reports.assign(c().trainers.size(), cut_report{});
  ask_trainer(0);
}

void cut_run::ask_trainer(std::size_t t) {
  while (t < c().trainers.size() && lost_trainer(t))
    ++t;
  if (t == c().trainers.size()) {
    // A lost trainer's part: its position at the cut before (stand_in).
    if (!failure_)
      failure_ = ck_.stand_in(g_, lost_trainers_);
    // 5. The EASGD centre while every syncer is held; then the syncers go on.
    const std::size_t size = g_.reports.empty() ? 0 : g_.reports[0].replica.size();
    g_.centre.assign(c().dense.empty() ? 0 : size, 0.0f);
    step_ = step::centre;
    if (!failure_ && !g_.centre.empty())
      return gather(0);
    return resume();
  }
  auto me = shared_from_this();
  self_->request(c().trainers[t], cfg().cluster.timeout, cut_atom::value, id_, last_)
    .then(
      [me, t](cut_report& r) {
        if (me->step_ != step::trainers)
          return;
        me->g_.reports[t] = std::move(r);
        me->ask_trainer(t + 1);
      },
      [me, t](caf::error& e) {
        if (me->step_ != step::trainers)
          return;
        me->fail(me->c().trainer_names[t], e);
        me->ask_trainer(t + 1);
      });
}

void cut_run::gather(std::size_t d) {
  if (d == c().dense.size())
    return resume();
  auto me = shared_from_this();
  self_->request(c().dense[d], cfg().cluster.timeout, dump_atom::value)
    .then(
      [me, d](dense_range& r) {
        if (me->step_ != step::centre)
          return;
        auto& params = me->g_.centre;
        if (r.offset + r.values.size() > params.size()) {
          me->failure_ = "checkpoint: " + me->c().dense_names[d] +
                         " dumped a range beyond the parameters";
          return me->resume();
        }
        std::copy(r.values.values.begin(), r.values.values.end(),
                  params.begin() + std::ptrdiff_t(r.offset));
        me->gather(d + 1);
      },
      [me, d](caf::error& e) {
        if (me->step_ != step::centre)
          return;
        me->failure_ =
          "checkpoint: " + me->c().dense_names[d] + ": dump failed: " + me->render(e);
        me->resume();
      });
}

void cut_run::resume() {
  for (std::size_t t = 0; t < c().trainers.size(); ++t)
    if (!lost_trainer(t))
      self_->send(c().trainers[t], actors::resume_atom::value);
  resumed_ = true;
  // A trainer failed: the job ends (or, under full recovery, rolls back).
  // Its shard answers are not awaited: a shard lost with it, holding the
  // request, would never answer, and a live one may still be writing into
  // the temporary folder, which the next commit removes.
  if (failure_)
    return finish(failure_);
  step_ = step::files;
  if (shards_in_ == files_.size())
    files();
}

void cut_run::lose_shard(std::size_t s, const std::string& why) {
  if (step_ == step::done || step_ == step::idle || s >= lost_.size() || lost_[s])
    return;
  if (!void_)
    void_ = why;
  spdlog::warn("checkpoint: cut {}: {}; the cut goes on without it and is taken again once "
               "it is back", id_, why);
  lost_[s] = true;
  // Asked already and not answered: counted in now (a dead shard never
  // answers its request).
  if (s < files_.size() && !files_[s] && !shard_errors_[s])
    shard_answered();
}

bool cut_run::abort(const std::string& why) {
  if (step_ == step::done || step_ == step::idle)
    return false;
  // The live trainers' syncers may be held (asked, or aimed at a round: ring
  // methods; a resume without a hold is nothing), and the shards that began
  // the cut hold the marked workers' pushes until it aligns, which it may
  // never do (a lost trainer's workers never mark): both are released.
  if (!resumed_)
    for (std::size_t t = 0; t < c().trainers.size(); ++t)
      if (!lost_trainer(t))
        self_->send(c().trainers[t], actors::resume_atom::value);
  resumed_ = true;
  for (std::size_t s = 0; s < c().shards.size(); ++s)
    if (s >= lost_.size() || !lost_[s])
      self_->send(c().shards[s], cut_atom::value, id_, actors::resume_atom::value);
  const auto what = "checkpoint: cut " + std::to_string(id_) + " aborted: " + why;
  spdlog::warn("{}; the trainers asked were released", what);
  finish(what);
  return true;
}

void cut_run::finish(std::optional<std::string> failure) {
  if (step_ == step::done)
    return;
  // (After a failure the temporary folder stays: a live shard may still be
  // writing into it; the next commit removes it.)
  step_ = step::done;
  if (fetching_) // (after its answer this is moot)
    fetching_->cancelled = true;
  auto done = std::move(done_);
  done(std::move(failure));
}

} // namespace runtime
