#pragma once
// What the roles' counted work (actors/work.hpp) costs a core of a modelled
// host under sim.cost=model: the one table of per-item constants. The
// roles count; only this file prices.
#include "actors/work.hpp"
#include "config/sim_config.hpp"

namespace runtime {

// One count's cost: flops of arithmetic and bytes of memory traffic (at the
// host's gflops and memory_gbps), or, where the host was calibrated per
// item (sim.lookup-row-ns, sim.push-row-ns), seconds.
struct work_cost {
  double flops = 0;
  double bytes = 0;
  double seconds = 0;
  bool timed = false; // seconds, not flops and bytes
};

work_cost cost_of(actors::work kind, double items, double width, double more,
                  const virtual_settings& host);

// A worker's dct.mp push, per gradient value, with its residual map at
// `map_rows` rows: mp_push_value_ns up to mp_push_map_rows,
// mp_push_value_big_ns from mp_push_big_map_rows, the blend linear in
// log(map_rows) between (the map's lookups fall out of one cache level
// after another as it grows); mp_push_value_ns at any size without both.
double mp_push_ns(const virtual_settings& host, double map_rows);

} // namespace runtime
