#pragma once
// The handles of a running cluster's roles and their names, wherever the
// actors live (one process or several nodes): what the coordinator, the
// recovery paths and the fault injector address.
#include <cstddef>
#include <string>
#include <vector>

#include <caf/actor_addr.hpp>

#include "actors/interfaces.hpp"

namespace runtime {

struct cluster_handles {
  std::vector<actors::embedding_shard_actor> shards;
  std::vector<actors::dense_shard_actor> dense; // EASGD only
  std::vector<actors::trainer_actor> trainers;
  // Names for messages, parallel to the vectors above ("trainer 1 on node t1").
  std::vector<std::string> shard_names, dense_names, trainer_names;
  // Multi-node: one monitored actor per node. A node that goes down takes its
  // roles with it: `essential` (it hosts shards) ends the job; otherwise its
  // trainers are lost.
  struct node {
    caf::actor_addr agent;
    std::string name;
    std::vector<std::size_t> trainers;
    bool essential = true;
  };
  std::vector<node> nodes;
};

// Default names: "embedding shard 0", "dense shard 0", "trainer 0".
void name_roles(cluster_handles& c);

} // namespace runtime
