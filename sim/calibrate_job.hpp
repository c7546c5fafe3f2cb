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

// The worker's arithmetic as the job spent it, over what sim.gflops priced
// it: its handlers that step the model (those that count work) took
// `measured` less, a handler, the fixed cost its bare handlers (the lookup
// replies) took, less their priced work other than the arithmetic. The
// factor that divides sim.gflops so that the model prices the job's dense
// steps as they ran; 1 where the worker has no bare handler, prices no
// arithmetic or spent none, else clamped to [dense_scale_min, dense_scale_max].
inline constexpr double dense_scale_min = 0.25, dense_scale_max = 4.0;
double dense_scale(const sim_metrics::role_busy& worker, double message_us);

// The job's gap a handler (seconds): every role's counted time against its
// price with the arithmetic priced `scale` times as long, over the counted
// handlers (0 where there are none).
double handler_gap(const sim_metrics& m, double message_us, double scale, double* handlers);

// What `role` spends more in the dct.mp job `mp` than in the same job
// without it (`plain`), less gap_s a handler for any handlers more, over
// what the model prices more: the factor the one-core dct.mp prices take.
// 1 where either difference is not positive (no dct.mp work priced or
// spent), else clamped to [mp_scale_min, mp_scale_max].
inline constexpr double mp_scale_min = 0.25, mp_scale_max = 10.0;
double mp_scale(const run_metrics& plain, const run_metrics& mp,
                const std::string& role, double message_us, double gap_s);

} // namespace runtime
