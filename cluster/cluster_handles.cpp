#include "cluster/cluster_handles.hpp"

namespace runtime {

void name_roles(cluster_handles& c) {
  c.shard_names.clear();
  c.dense_names.clear();
  c.trainer_names.clear();
  for (std::size_t i = 0; i < c.shards.size(); ++i)
    c.shard_names.push_back("embedding shard " + std::to_string(i));
  for (std::size_t i = 0; i < c.dense.size(); ++i)
    c.dense_names.push_back("dense shard " + std::to_string(i));
  for (std::size_t i = 0; i < c.trainers.size(); ++i)
    c.trainer_names.push_back("trainer " + std::to_string(i));
}

} // namespace runtime
