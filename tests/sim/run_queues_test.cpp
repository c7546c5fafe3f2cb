// The simulated hosts' ready jobs (sim/run_queues.hpp): CAF 0.17's
// work-stealing queues (a sender's core's front, a round robin's back, a
// steal from the tail) and its sharing queue (one, first in first out).
#include <doctest/doctest.h>

#include <vector>

#include "sim/run_queues.hpp"

namespace {

// Stand-ins for jobs: the queues never look inside them.
caf::resumable* job(int i) {
  static char tokens[16];
  return reinterpret_cast<caf::resumable*>(&tokens[i]);
}

std::vector<caf::resumable*> drain(runtime::run_queues& q, std::size_t h, std::size_t core) {
  std::vector<caf::resumable*> out;
  while (auto* j = q.take(h, core))
    out.push_back(j);
  return out;
}

} // namespace

TEST_CASE("run queues: work stealing puts a sender's job first on its core, an outside one "
          "last on the next core in turn") {
  runtime::run_queues q(true);
  q.add_host(0, 2);
  q.push_external(0, job(1)); // core 0
  q.push_external(0, job(2)); // core 1
  q.push_external(0, job(3)); // core 0
  q.push_internal(0, 0, job(4)); // front of core 0
  q.push_later(0, 0, job(5));    // back of core 0
  CHECK(q.hosts_with_work().count(0) == 1);
  CHECK(drain(q, 0, 0) ==
        std::vector<caf::resumable*>{job(4), job(1), job(3), job(5), job(2)}); // 2: stolen
  CHECK(q.hosts_with_work().empty());
  CHECK(!q.can_take(0, 1));
}

TEST_CASE("run queues: an idle core steals the oldest job of another core's queue") {
  runtime::run_queues q(true);
  q.add_host(3, 2);
  q.push_external(3, job(1)); // core 0, oldest
  q.push_internal(3, 0, job(2));
  q.push_internal(3, 0, job(3)); // core 0: 3 2 1
  REQUIRE(q.can_take(3, 1));
  CHECK(q.take(3, 1) == job(1)); // the tail
  CHECK(q.take(3, 0) == job(3)); // the head
  CHECK(q.take(3, 1) == job(2));
  CHECK(q.take(3, 1) == nullptr);
}

TEST_CASE("run queues: a continued turn goes before its core's queue, and only on that core") {
  runtime::run_queues q(true);
  q.add_host(0, 2);
  q.push_internal(0, 1, job(1));
  q.continue_on(0, 1, job(2));
  CHECK(q.take(0, 0) == job(1)); // core 0 may steal the queued job, not the turn
  CHECK(q.can_take(0, 1));
  CHECK(!q.can_take(0, 0));
  CHECK(q.take(0, 1) == job(2));
  CHECK(q.hosts_with_work().empty());
}

TEST_CASE("run queues: sharing keeps one queue per host, first in first out") {
  runtime::run_queues q(false);
  q.add_host(0, 2);
  q.push_external(0, job(1));
  q.push_internal(0, 1, job(2));
  q.push_later(0, 0, job(3));
  q.push_internal(0, 0, job(4));
  CHECK(q.take(0, 1) == job(1));
  CHECK(drain(q, 0, 0) == std::vector<caf::resumable*>{job(2), job(3), job(4)});
}
