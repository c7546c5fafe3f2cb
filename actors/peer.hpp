#pragma once
// Naming the sender of a refused message in the log (DESIGN.md section 13,
// Resources): a refusal of an out-of-plan id, index or count says who sent
// it, the value and what the plan allows.
#include <string>

#include <caf/actor_control_block.hpp>
#include <caf/node_id.hpp>

namespace actors {

// "actor 42 on node <host hash>#<pid>", or "an anonymous sender".
inline std::string peer_name(const caf::strong_actor_ptr& p) {
  if (!p)
    return "an anonymous sender";
  return "actor " + std::to_string(p->id()) + " on node " + caf::to_string(p->node());
}

} // namespace actors
