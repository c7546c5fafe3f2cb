#include "sim/calibrate_job.hpp"

#include <algorithm>

namespace runtime {

role_time counted(const sim_metrics::role_busy& r, double message_us) {
  role_time t{r.seconds, r.model_seconds, double(r.handlers)};
  // A role whose bare handlers are long (a shard filling its tables before
  // training) counts its other handlers only.
  if (r.bare_handlers > 0 && r.bare_seconds / double(r.bare_handlers) > 1e-3) {
    t.measured -= r.bare_seconds;
    t.model -= double(r.bare_handlers) * message_us * 1e-6;
    t.handlers -= double(r.bare_handlers);
  }
  return t;
}

double dense_scale(const sim_metrics::role_busy& worker, double message_us) {
  const double stepping = double(worker.handlers) - double(worker.bare_handlers);
  if (worker.bare_handlers == 0 || !(stepping > 0) || !(worker.flops_seconds > 0))
    return 1.0;
  const double fixed = worker.bare_seconds / double(worker.bare_handlers);
  const double priced_other =
    worker.model_seconds - double(worker.bare_handlers) * message_us * 1e-6 -
    stepping * message_us * 1e-6 - worker.flops_seconds;
  const double spent =
    worker.seconds - worker.bare_seconds - stepping * fixed - std::max(priced_other, 0.0);
  if (!(spent > 0))
    return 1.0;
  return std::clamp(spent / worker.flops_seconds, dense_scale_min, dense_scale_max);
}

double handler_gap(const sim_metrics& m, double message_us, double scale, double* handlers) {
  double measured = 0, model = 0, n = 0;
  for (const auto& [role, r] : m.busy_by_role) {
    const auto t = counted(r, message_us);
    measured += t.measured;
    model += t.model + (scale - 1.0) * r.flops_seconds;
    n += t.handlers;
  }
  if (handlers)
    *handlers = n;
  return n > 0 ? (measured - model) / n : 0.0;
}

double mp_scale(const run_metrics& plain, const run_metrics& mp,
                const std::string& role, double message_us, double gap_s) {
  const auto a = plain.sim->busy_by_role.find(role), b = mp.sim->busy_by_role.find(role);
  if (a == plain.sim->busy_by_role.end() || b == mp.sim->busy_by_role.end())
    return 1.0;
  const auto p = counted(a->second, message_us), q = counted(b->second, message_us);
  const double priced = q.model - p.model;
  const double spent = q.measured - p.measured - (q.handlers - p.handlers) * gap_s;
  if (!(priced > 0) || !(spent > 0))
    return 1.0;
  return std::clamp(spent / priced, mp_scale_min, mp_scale_max);
}

} // namespace runtime
