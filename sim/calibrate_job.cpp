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
