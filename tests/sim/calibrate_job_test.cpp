// The measured job's arithmetic (sim/calibrate_job.hpp): a role's counted
// time without its long bare handlers, and the dct.mp price factor from a
// job with and without dct.mp.
#include <doctest/doctest.h>

#include "sim/calibrate_job.hpp"

namespace {

runtime::sim_metrics::role_busy busy(double seconds, double model, std::uint64_t handlers,
                                     std::uint64_t bare = 0, double bare_seconds = 0) {
  runtime::sim_metrics::role_busy r;
  r.seconds = seconds;
  r.model_seconds = model;
  r.handlers = handlers;
  r.bare_handlers = bare;
  r.bare_seconds = bare_seconds;
  return r;
}

runtime::run_metrics job(runtime::sim_metrics::role_busy worker,
                         runtime::sim_metrics::role_busy shard) {
  runtime::run_metrics m;
  m.sim.emplace();
  m.sim->busy_by_role["hogwild-worker"] = worker;
  m.sim->busy_by_role["embedding-shard"] = shard;
  return m;
}

} // namespace

TEST_CASE("a role's counted time leaves out long bare handlers only") {
  // 10 bare handlers of 0.09 s each (a shard filling its tables): out, with
  // their price of message-us each.
  const auto t = runtime::counted(busy(1.0, 0.2, 110, 10, 0.9), 10.0);
  CHECK(t.measured == doctest::Approx(0.1));
  CHECK(t.model == doctest::Approx(0.2 - 10 * 10e-6));
  CHECK(t.handlers == doctest::Approx(100));
  // Short bare handlers (replies taken) stay in.
  const auto u = runtime::counted(busy(1.0, 0.2, 110, 10, 0.005), 10.0);
  CHECK(u.measured == doctest::Approx(1.0));
  CHECK(u.handlers == doctest::Approx(110));
}

TEST_CASE("the dct.mp price factor: the extra time spent over the extra time priced") {
  const auto plain = job(busy(0.40, 0.39, 3000), busy(1.05, 0.09, 3000, 10, 0.93));
  // The worker spends 0.27 s more under dct.mp where the model prices 0.09
  // more: 3x. The shard, past its bare handlers, 0.06 more against 0.045.
  const auto mp = job(busy(0.67, 0.48, 3000), busy(0.79, 0.135, 3000, 10, 0.61));
  CHECK(runtime::mp_scale(plain, mp, "hogwild-worker", 10.0, 5e-6) == doctest::Approx(3.0));
  CHECK(runtime::mp_scale(plain, mp, "embedding-shard", 10.0, 5e-6) ==
        doctest::Approx(0.06 / 0.045));
  // Handlers more under dct.mp: their gap is not dct.mp work. 100 more at
  // 0.3 ms each take 0.03 s of the 0.27.
  const auto more = job(busy(0.67, 0.48, 3100), busy(0.79, 0.135, 3000, 10, 0.61));
  CHECK(runtime::mp_scale(plain, more, "hogwild-worker", 10.0, 3e-4) ==
        doctest::Approx(0.24 / 0.09));
  // Bounded, and 1 where nothing is priced more, nothing is spent more, or
  // the role is missing.
  const auto wild = job(busy(9.0, 0.40, 3000), busy(1.05, 0.09, 3000, 10, 0.93));
  CHECK(runtime::mp_scale(plain, wild, "hogwild-worker", 10.0, 5e-6) == runtime::mp_scale_max);
  CHECK(runtime::mp_scale(plain, plain, "hogwild-worker", 10.0, 5e-6) == 1.0);
  const auto faster = job(busy(0.30, 0.48, 3000), busy(0.79, 0.135, 3000, 10, 0.61));
  CHECK(runtime::mp_scale(plain, faster, "hogwild-worker", 10.0, 5e-6) == 1.0);
  CHECK(runtime::mp_scale(plain, mp, "reader", 10.0, 5e-6) == 1.0);
}

TEST_CASE("the worker's dense rate as the job spent it, and the gap at that rate") {
  // 1 000 handlers that step the model and 2 000 bare ones (lookup replies)
  // of 12 us each; message-us 2. The steps are priced 0.2 s of arithmetic
  // and 0.05 s of other work; they took 12 us each as the bare ones, the
  // 0.05 s, and 0.3 s of arithmetic: 1.5 times the price.
  auto worker = busy(0.024 + 0.012 + 0.05 + 0.3, 3000 * 2e-6 + 0.2 + 0.05, 3000, 2000, 0.024);
  worker.flops_seconds = 0.2;
  CHECK(runtime::dense_scale(worker, 2.0) == doctest::Approx(1.5));
  // At that rate the worker's handlers cost 10 us beyond message-us each;
  // the shard's 4 000 (no arithmetic) 0.08 s beyond their 0.02.
  auto m = job(worker, busy(0.1, 0.02, 4000));
  double handlers = 0;
  CHECK(runtime::handler_gap(*m.sim, 2.0, 1.5, &handlers) ==
        doctest::Approx((0.03 + 0.08) / 7000));
  CHECK(handlers == doctest::Approx(7000));
  // At the probe's rate the worker's slow arithmetic lands in the gap.
  CHECK(runtime::handler_gap(*m.sim, 2.0, 1.0, nullptr) ==
        doctest::Approx((0.13 + 0.08) / 7000));
  // 1 without bare handlers, without arithmetic, or when nothing is left
  // for it; bounded otherwise.
  auto no_bare = worker;
  no_bare.bare_handlers = 0;
  CHECK(runtime::dense_scale(no_bare, 2.0) == 1.0);
  auto no_flops = worker;
  no_flops.flops_seconds = 0;
  CHECK(runtime::dense_scale(no_flops, 2.0) == 1.0);
  auto all_fixed = worker;
  all_fixed.seconds = 0.024 + 0.012 + 0.05 - 0.001;
  CHECK(runtime::dense_scale(all_fixed, 2.0) == 1.0);
  auto slow = worker;
  slow.seconds += 10.0;
  CHECK(runtime::dense_scale(slow, 2.0) == runtime::dense_scale_max);
  auto fast = worker;
  fast.seconds = 0.024 + 0.012 + 0.05 + 0.001;
  CHECK(runtime::dense_scale(fast, 2.0) == runtime::dense_scale_min);
}
