#pragma once
// Work a role hands off its handler (a checkpoint file's write), and what
// the role does once it is done; the fabric decides where it runs, so the
// role is written once for every clock.
//
// - Where threads may send (execution::threads_may_send: real threads, the
//   wall clock, multi-node), `work` runs on a thread of its own, which then
//   calls `notify`: it sends the role the message whose handler finishes
//   (and joins the returned thread).
// - Where one thread runs every handler (the discrete-event engine), `work`
//   runs now, inside the handler, the work it counts (actors::count) and
//   its store time charged to it, and `finish` right after. The returned
//   thread is not joinable; `notify` is not called.
//
// `work` owns what it reads (a copy of the rows it writes) or reads state
// the role does not change until it has finished.
#include <functional>
#include <thread>
#include <utility>

#include <caf/actor_system.hpp>

#include "actors/work.hpp"

namespace actors {

template <class Work, class Notify, class Finish>
std::thread off_handler(caf::actor_system& sys, Work work, Notify notify, Finish finish) {
  if (execution_of(sys).threads_may_send)
    return std::thread([work = std::move(work), notify = std::move(notify)]() mutable {
      work();
      notify();
    });
  work();
  finish();
  return {};
}

// The same for a job that runs on a thread of its own anyway (a
// checkpoint::background_writer): `start(done)` starts it, handing it the
// callback its thread calls when it is done: `notify` where threads may
// send, an empty one elsewhere. `meanwhile` then runs in the handler (what
// the role does while the job runs). Where no thread may send, `finish`
// runs last, in the handler (it waits for the job).
template <class Start, class Meanwhile, class Notify, class Finish>
void on_own_thread(caf::actor_system& sys, Start start, Meanwhile meanwhile, Notify notify,
                   Finish finish) {
  const bool threads = execution_of(sys).threads_may_send;
  start(threads ? std::function<void()>(std::move(notify)) : std::function<void()>());
  meanwhile();
  if (!threads)
    finish();
}

} // namespace actors
