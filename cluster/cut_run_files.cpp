// The files step of a cut (cut_run.hpp): the shards' answers, then the
// checkpointer's commit; in a multi-node run a detached thread of the cut
// fetches each shard's file over the wire and commits:
//   coordinator -> its cut's fetching thread: cutfetch(N)  (in-process only)
//   fetching thread -> embedding shard: cut(N, offset) -> file_chunk
#include "cluster/cut_run.hpp"

#include <caf/all.hpp>

#include "cluster/shard_fetch.hpp"

namespace runtime {

using namespace messages;

namespace {
// The coordinator -> its cut's fetching thread (in-process only).
using cut_fetch_atom = caf::atom_constant<caf::atom("cutfetch")>;
} // namespace

void cut_run::shard_answered() {
  ++shards_in_;
  if (step_ == step::files && shards_in_ == files_.size())
    files();
}

void cut_run::files() {
  if (void_) // a shard was lost: the live shards are done, nothing commits
    return finish("checkpoint: cut " + std::to_string(id_) + " void: " + *void_);
  // 4. The shards' files, in shard order (the first error wins).
  for (std::size_t s = 0; s < files_.size(); ++s) {
    if (shard_errors_[s]) {
      fail(c().shard_names[s], *shard_errors_[s]);
      continue;
    }
    g_.pushes_held += files_[s]->pushes_held;
    g_.rows_copied += files_[s]->rows_copied;
    if (ck_.fetches_shard_files())
      continue; // fetched below
    const auto& f = *files_[s];
    w_.add(checkpoint::file_info{f.name, f.bytes, f.crc32c});
  }
  if (failure_)
    return finish(failure_);
  if (ck_.fetches_shard_files())
    return fetch_and_commit();
  // 6. Replicas, centre, manifest, commit.
  finish(ck_.commit(w_, std::move(g_)));
}

void cut_run::fetch_and_commit() {
  // The thread holds what it reads by value (the fetch job, the commit's
  // job) and w_ (kept alive by `me`); it never touches ck_, c() or self_,
  // which end with the run: an abort (a node lost) lets the run end while
  // the thread still waits on a piece. The abort cancels it before its next
  // file or its commit and ignores its answer; ck_ hears of a commit only
  // through this cut, on the coordinator.
  auto job = std::make_shared<cut_fetch_job>();
  job->cut = id_;
  job->timeout = cfg().cluster.timeout;
  for (std::size_t s = 0; s < files_.size(); ++s) {
    job->shards.push_back(c().shards[s]);
    job->shard_names.push_back(c().shard_names[s]);
    job->files.push_back({files_[s]->name, files_[s]->bytes, files_[s]->crc32c});
  }
  auto commit = std::make_shared<cut_commit>(ck_.prepare(std::move(g_)));
  fetching_ = job;
  auto me = shared_from_this();
  auto fetcher =
    self_->system().spawn<caf::detached>([me, job, commit](caf::blocking_actor* b) {
      b->receive([&](cut_fetch_atom, std::uint64_t) -> std::string {
        auto e = fetch_cut_files(b, *job, me->w_);
        if (!e && job->cancelled)
          e = "checkpoint: cut " + std::to_string(job->cut) + ": cancelled";
        if (e)
          me->w_.abandon();
        else
          e = write_cut(me->w_, *commit);
        return e ? *e : std::string{};
      });
    });
  self_->request(fetcher, caf::infinite, cut_fetch_atom::value, id_)
    .then(
      [me, commit](std::string& e) {
        if (me->step_ != step::files)
          return;
        if (e.empty())
          me->ck_.committed(*commit);
        me->finish(e.empty() ? std::nullopt : std::optional<std::string>(std::move(e)));
      },
      [me](caf::error& e) {
        if (me->step_ == step::files)
          me->finish("checkpoint: cut " + std::to_string(me->id_) +
                     ": the fetching thread failed: " + me->render(e));
      });
}

} // namespace runtime
