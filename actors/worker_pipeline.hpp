#pragma once
// The Hogwild worker's pipeline decision (hogwild_worker.hpp), as a pure
// function of its state: which step comes next. No CAF, no clock: the
// worker's advance() reads its flags into a pipeline_view, takes the step,
// updates the flags and asks again until the answer is `wait`. The rules
// (tests/actors/worker_pipeline_test.cpp walks every combination):
//
// 1. A finished or parked worker waits.
// 2. A batch in hand whose lookups are not out (staged: the reader's reply
//    came while another batch was in flight, or has just come) has them
//    sent as soon as no batch is in flight, even while a foreground round
//    is pending (a batch that arrives during a round has its lookups out at
//    once).
// 3. A pending foreground round stops the rest of the pipeline, except while
//    a cut drains it (the syncer is held until the cut is written: waiting
//    for the round would deadlock).
// 4. Without a ready batch, the in-flight one is promoted when all its
//    rows are in.
// 5. The next batch is fetched when the data has not ended, no cut is
//    draining, no round is pending and none is requested, and then: none is
//    in flight or staged; with read-ahead (cluster.read-ahead) none is
//    staged, or the staged one is about to be launched (the request goes out
//    before its lookups), so that the reader parses the batch after next
//    while the ready one computes (at most a ready, an in-flight and a
//    staged batch).
// 6. The ready batch is trained once the next one's lookups are out, or no
//    next one will come (end of data, or a cut draining the pipeline): so
//    the next batch's lookups hide behind this batch's computation.
// 7. Empty (nothing ready, in flight, staged or requested): at the end of
//    data the worker finishes (not while a round is pending); while
//    draining it parks for the cut.
// 8. Otherwise it waits for a reply.
namespace actors {

struct pipeline_view {
  bool finished = false;          // done sent or failed
  bool parked = false;            // parked for a cut, waiting for its resume
  bool draining = false;          // a cut was asked for and not yet parked
  bool sync_pending = false;      // a foreground round's reply is awaited
  bool has_ready = false;         // a batch with all its rows, not trained yet
  bool has_inflight = false;      // a batch whose lookups are out
  bool has_staged = false;        // a batch from the reader, its lookups not out yet
  bool inflight_complete = false; // ... and all its rows are in
  bool reader_pending = false;    // a batch is requested from the reader
  bool end_of_data = false;       // the reader said there is no more
  bool read_ahead = false;        // cluster.read-ahead: fetch while a batch is in flight
};

enum class pipeline_step { wait, launch, train, promote, fetch, finish, park };

pipeline_step next_step(const pipeline_view& v);

const char* to_string(pipeline_step s);

} // namespace actors
