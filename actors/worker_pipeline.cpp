#include "actors/worker_pipeline.hpp"

namespace actors {

pipeline_step next_step(const pipeline_view& v) {
  if (v.finished || v.parked)
    return pipeline_step::wait;
  const bool launching = v.has_staged && !v.has_inflight;
  const bool room = v.read_ahead ? !v.has_staged || launching : !v.has_staged && !v.has_inflight;
  if (!v.draining && !v.sync_pending && !v.reader_pending && !v.end_of_data && room)
    return pipeline_step::fetch;
  if (launching)
    return pipeline_step::launch;
  if (v.sync_pending && !v.draining)
    return pipeline_step::wait;
  if (!v.has_ready && v.has_inflight && v.inflight_complete)
    return pipeline_step::promote;
  if (v.has_ready && (v.has_inflight || v.end_of_data || v.draining))
    return pipeline_step::train;
  const bool empty = !v.has_ready && !v.has_inflight && !v.has_staged && !v.reader_pending;
  if (v.end_of_data && empty && !v.sync_pending)
    return pipeline_step::finish;
  if (v.draining && empty)
    return pipeline_step::park;
  return pipeline_step::wait;
}

const char* to_string(pipeline_step s) {
  switch (s) {
    case pipeline_step::launch:
      return "launch";
    case pipeline_step::train:
      return "train";
    case pipeline_step::promote:
      return "promote";
    case pipeline_step::fetch:
      return "fetch";
    case pipeline_step::finish:
      return "finish";
    case pipeline_step::park:
      return "park";
    default:
      return "wait";
  }
}

} // namespace actors
