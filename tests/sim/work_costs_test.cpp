// The cost model's prices (sim/work_costs.hpp): a dct.mp push per value
// follows its residual map's size between the two calibrated points; a
// thresholded message's decode per value where calibrated.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/work_costs.hpp"

TEST_CASE("work costs: a dct.mp push costs more per value as the residual map grows") {
  runtime::virtual_settings s;
  s.mp_push_value_ns = 3;
  // Without the second point every map size costs the first.
  CHECK(runtime::mp_push_ns(s, 1e3) == 3);
  CHECK(runtime::mp_push_ns(s, 1e7) == 3);
  s.mp_push_map_rows = 32768;
  s.mp_push_value_big_ns = 5;
  CHECK(runtime::mp_push_ns(s, 0) == 3);
  CHECK(runtime::mp_push_ns(s, 32768) == 3);
  // log-linear between 2^15 and 2^19 rows: 2^17 is half way.
  CHECK(runtime::mp_push_ns(s, 131072) == doctest::Approx(4.0));
  CHECK(runtime::mp_push_ns(s, 65536) == doctest::Approx(3.5));
  CHECK(runtime::mp_push_ns(s, runtime::mp_push_big_map_rows) == doctest::Approx(5.0));
  CHECK(runtime::mp_push_ns(s, 1e8) == 5);
  // The worker's count carries the map's rows: the price follows.
  const auto small = runtime::cost_of(actors::work::sparse_encode, 1000, 1, 0, s);
  const auto large = runtime::cost_of(actors::work::sparse_encode, 1000, 1, 1e6, s);
  CHECK(small.timed);
  CHECK(small.seconds == doctest::Approx(3e-6));
  CHECK(large.seconds == doctest::Approx(5e-6));
  // A first point at or past the second: flat (a table too small to grow
  // the map that far is measured once).
  s.mp_push_map_rows = 1e6;
  CHECK(runtime::mp_push_ns(s, 2e6) == 3);
}

TEST_CASE("work costs: a thresholded message's decode is priced per value of its dense size "
          "where calibrated, else as 4 bytes a value of memory traffic") {
  runtime::virtual_settings s;
  const auto bytes = runtime::cost_of(actors::work::sparse_decode, 100, 16, 0, s);
  CHECK_FALSE(bytes.timed);
  CHECK(bytes.bytes == doctest::Approx(4.0 * 1600));
  s.mp_decode_value_ns = 0.5;
  const auto timed = runtime::cost_of(actors::work::sparse_decode, 100, 16, 0, s);
  CHECK(timed.timed);
  CHECK(timed.seconds == doctest::Approx(1600 * 0.5e-9));
}

TEST_CASE("work costs: the dense sync's traffic is priced at sim.sync-gbps where calibrated, "
          "else as memory traffic") {
  runtime::virtual_settings s;
  using actors::work;
  for (const auto kind : {work::snapshot, work::merge, work::elastic_update, work::ring_reduce,
                          work::ring_sum, work::dense_delta, work::sparse_relay,
                          work::sparse_exchange}) {
    s.sync_gbps = 0;
    const auto as_memory = runtime::cost_of(kind, 1000, 0, 0, s);
    CHECK_FALSE(as_memory.timed);
    CHECK(as_memory.bytes > 0);
    s.sync_gbps = 50;
    const auto timed = runtime::cost_of(kind, 1000, 0, 0, s);
    CHECK(timed.timed);
    CHECK(timed.seconds == doctest::Approx(as_memory.bytes / 50e9));
  }
}
