// `shadowsync launch`'s split of one machine's cores between the nodes it
// starts (runtime::threads_per_node). The nodes' own logs show the count
// each one runs with (tests/system/multinode_test.sh checks them).
#include <doctest/doctest.h>

#include "deploy/launcher.hpp"

TEST_CASE("launch splits the machine's cores between its nodes, at least one thread each") {
  CHECK(runtime::threads_per_node(2, 3) == 1); // this machine and config/cluster-3node.ini
  CHECK(runtime::threads_per_node(2, 2) == 1);
  CHECK(runtime::threads_per_node(2, 1) == 2);
  CHECK(runtime::threads_per_node(16, 3) == 5);
  CHECK(runtime::threads_per_node(16, 4) == 4);
  CHECK(runtime::threads_per_node(4, 16) == 1);
  // hardware_concurrency() may answer 0 ("unknown"); a spec without nodes
  // is refused before, but neither divides by zero here.
  CHECK(runtime::threads_per_node(0, 3) == 1);
  CHECK(runtime::threads_per_node(8, 0) == 8);
}
