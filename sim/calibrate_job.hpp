#pragma once
// What a measured job (sim.cost=measured, sim/virtual_time.hpp) says about
// the cost model: a role's measured against its priced time, and the factor
// a kind of work's one-core prices take from two jobs that differ in it
// (`shadowsync calibrate`, tools/calibrate_handlers.cpp).
#include <string>

#include "report/run_metrics.hpp"

namespace runtime {

// A role's measured time, priced time and handlers in a measured job,
// less its long bare handlers (a shard filling its tables before training)
// when there are any.
struct role_time {
  double measured = 0, model = 0, handlers = 0;
};
role_time counted(const sim_metrics::role_busy& r, double message_us);

// What `role` spends more in the dct.mp job `mp` than in the same job
// without it (`plain`), less gap_s a handler for any handlers more, over
// what the model prices more: the factor the one-core dct.mp prices take.
// 1 where either difference is not positive (no dct.mp work priced or
// spent), else clamped to [mp_scale_min, mp_scale_max].
inline constexpr double mp_scale_min = 0.25, mp_scale_max = 10.0;
double mp_scale(const run_metrics& plain, const run_metrics& mp,
                const std::string& role, double message_us, double gap_s);

} // namespace runtime
