// The Hogwild worker's pipeline policy (actors/worker_pipeline.hpp), without
// CAF: every combination of its flags against the rules, no stall without an
// outstanding reply, and walks of whole runs (with a cut, with foreground
// rounds) in which every batch is trained exactly once, with the next
// batch's lookups and the batch after next's read under way while it trains.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "actors/worker_pipeline.hpp"

using actors::next_step;
using actors::pipeline_step;
using actors::pipeline_view;

namespace {

pipeline_view view_of(unsigned bits) {
  pipeline_view v;
  v.finished = bits & 1;
  v.parked = bits & 2;
  v.draining = bits & 4;
  v.sync_pending = bits & 8;
  v.has_ready = bits & 16;
  v.has_inflight = bits & 32;
  v.inflight_complete = (bits & 64) && v.has_inflight;
  v.reader_pending = bits & 128;
  v.end_of_data = bits & 256;
  v.has_staged = bits & 512;
  v.read_ahead = bits & 1024;
  return v;
}

} // namespace

TEST_CASE("worker pipeline: every combination of flags follows the rules") {
  for (unsigned bits = 0; bits < 2048; ++bits) {
    const auto v = view_of(bits);
    const auto s = next_step(v);
    CAPTURE(bits);
    CAPTURE(actors::to_string(s));
    const bool empty = !v.has_ready && !v.has_inflight && !v.has_staged && !v.reader_pending;
    if (v.finished || v.parked)
      CHECK(s == pipeline_step::wait);
    if (v.sync_pending && !v.draining) // a pending round stops all but the lookups
      CHECK((s == pipeline_step::wait || s == pipeline_step::launch));
    switch (s) {
      case pipeline_step::launch: // a staged batch's lookups go out when none are
        CHECK(v.has_staged);
        CHECK(!v.has_inflight);
        break;
      case pipeline_step::train: // the next batch's lookups hide behind it
        CHECK(v.has_ready);
        CHECK((v.has_inflight || v.end_of_data || v.draining));
        break;
      case pipeline_step::promote:
        CHECK(!v.has_ready);
        CHECK(v.inflight_complete);
        break;
      case pipeline_step::fetch: // none during a cut or a round; at most one staged
        CHECK(!v.draining);
        CHECK(!v.sync_pending);
        CHECK(!v.reader_pending);
        if (v.read_ahead) // the staged one is launched next, its request first
          CHECK((!v.has_staged || !v.has_inflight));
        else // without read-ahead, none in flight
          CHECK((!v.has_staged && !v.has_inflight));
        CHECK(!v.end_of_data);
        break;
      case pipeline_step::finish:
        CHECK(v.end_of_data);
        CHECK(empty);
        CHECK(!v.sync_pending);
        break;
      case pipeline_step::park: // nothing of the cut's examples left in hand
        CHECK(v.draining);
        CHECK(empty);
        break;
      case pipeline_step::wait:
        // No stall: a live worker waits only for a reply it is owed.
        if (!v.finished && !v.parked) {
          const bool owed = v.sync_pending || v.reader_pending ||
                            (v.has_inflight && !v.inflight_complete);
          CHECK(owed);
        }
        break;
    }
  }
}

namespace {

// A scripted environment for the policy: a reader with `batches` batches,
// lookups answered at the next event, a foreground round every `k` trained
// batches (0: none) answered at the next event, and a cut asked for after
// `cut_after` trained batches (0: none), resumed as soon as parked.
struct walk {
  std::uint64_t batches = 0, k = 0, cut_after = 0;
  bool read_ahead = false;
  pipeline_view v;
  std::uint64_t fetched = 0, trained = 0, parks = 0, steps = 0;
  // Trains outside a cut's drain and before the data's end at which the
  // next batch's lookups were out and the batch after next was requested or
  // staged (the reader and the shards work while the batch computes).
  std::uint64_t overlapped = 0, open_trains = 0;
  std::vector<std::uint64_t> trained_seq;
  std::uint64_t inflight = 0, ready = 0, staged = 0;
  bool finished = false;

  void run() {
    v.read_ahead = read_ahead;
    while (!finished && steps < 100000) {
      ++steps;
      const auto s = next_step(v);
      switch (s) {
        case pipeline_step::fetch:
          v.reader_pending = true;
          break;
        case pipeline_step::launch:
          inflight = staged;
          v.has_staged = false;
          v.has_inflight = true;
          v.inflight_complete = false;
          break;
        case pipeline_step::promote:
          v.has_ready = true;
          ready = inflight;
          v.has_inflight = v.inflight_complete = false;
          break;
        case pipeline_step::train:
          if (!v.draining && !v.end_of_data) {
            ++open_trains;
            if (v.has_inflight && (v.reader_pending || v.has_staged))
              ++overlapped;
          }
          v.has_ready = false;
          trained_seq.push_back(ready);
          ++trained;
          if (k > 0 && trained % k == 0)
            v.sync_pending = true;
          if (cut_after > 0 && trained == cut_after)
            v.draining = true;
          break;
        case pipeline_step::park:
          ++parks;
          v.draining = false; // resumed at once
          break;
        case pipeline_step::finish:
          finished = true;
          break;
        case pipeline_step::wait: // the environment answers one thing
          if (v.sync_pending)
            v.sync_pending = false;
          else if (v.reader_pending) {
            v.reader_pending = false;
            if (fetched == batches)
              v.end_of_data = true;
            else {
              staged = fetched++;
              v.has_staged = true;
            }
          } else if (v.has_inflight && !v.inflight_complete)
            v.inflight_complete = true;
          else
            FAIL("stalled with nothing owed");
          break;
      }
    }
  }
};

} // namespace

TEST_CASE("worker pipeline: a whole run trains every batch once, in order, and finishes") {
  for (bool ahead : {false, true})
  for (std::uint64_t k : {0, 1, 3}) {
    for (std::uint64_t cut : {0, 1, 5, 10}) {
      CAPTURE(ahead);
      CAPTURE(k);
      CAPTURE(cut);
      walk w;
      w.read_ahead = ahead;
      w.batches = 10;
      w.k = k;
      w.cut_after = cut;
      w.run();
      CHECK(w.finished);
      CHECK(w.trained == 10);
      std::vector<std::uint64_t> want;
      for (std::uint64_t i = 0; i < 10; ++i)
        want.push_back(i);
      CHECK(w.trained_seq == want);
      // Every train before the data's end and outside a drain overlaps the
      // next batch's lookups, and with read-ahead the read of the one
      // after; without it the reader is asked only once nothing is in
      // flight.
      CHECK(w.open_trains > 0);
      CHECK(w.overlapped == (ahead ? w.open_trains : 0));
      // A cut within the data parks the worker once; one after its last
      // batch may find the data ended, and the end counts as the marker.
      if (cut == 0)
        CHECK(w.parks == 0);
      else if (cut < 10)
        CHECK(w.parks == 1);
      else
        CHECK(w.parks <= 1);
    }
  }
}
