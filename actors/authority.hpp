#pragma once
// Who may send what to a role (README "Security model", DESIGN.md section 13).
// In one process every sender is local and everything is allowed. In a
// multi-node run a role's node agent fills this from the coordinator's plan:
//   - directing messages (spawn-time wiring, start, stop, cut, save, dump,
//     recover, rebind, hold, resume) come from this process or the
//     coordinator's node;
//   - data-plane messages (lookups, pushes, cut markers, ring steps, dense
//     exchanges) come from this process, the coordinator's node or a node the
//     plan gives a trainer; one that names a trainer only from that trainer's
//     node.
// A message from anyone else is refused: logged with the sender's CAF node
// (the identity the coordinator verified at hello), and it has no effect.
// An anonymous message (no sender) is from no one and always refused.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor_control_block.hpp>
#include <caf/error.hpp>
#include <caf/node_id.hpp>

namespace actors {

struct authority {
  caf::node_id director;                    // the coordinator's node; none: this process only
  std::vector<caf::node_id> trainer_nodes;  // by trainer id; empty: this process only

  // The sender is in this process (`here`) or on the coordinator's node.
  bool directs(const caf::strong_actor_ptr& sender, const caf::node_id& here) const;
  // ... or on any trainer's node.
  bool data_plane(const caf::strong_actor_ptr& sender, const caf::node_id& here) const;
  // The sender is in this process, or on the node of trainer `trainer`.
  bool speaks_for(const caf::strong_actor_ptr& sender, std::uint32_t trainer,
                  const caf::node_id& here) const;
};

// Logs the refusal ("ROLE refused WHAT from actor N on node X: only ONLY may
// send it"; the first 20 and then every 1000th of a process) and returns the
// bad_request error a request handler replies with.
caf::error refuse_sender(const std::string& role, const std::string& what,
                         const caf::strong_actor_ptr& sender, const std::string& only);

// The texts of `only` above.
inline const char* directors_only = "this process or the coordinator's node";
inline const char* data_plane_only = "this process, the coordinator's node or a trainer's node";

} // namespace actors
