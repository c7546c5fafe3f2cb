#pragma once
// A sender on another node, for the authority tests: a CAF forwarding proxy
// (the kind of handle BASP makes for a remote actor) with a node id of its
// own. A message sent as it (caf::send_as) reaches a role with that node
// as current_sender()->node(); what the role answers goes through the
// proxy to a local sink, which keeps the inner messages.
#include <memory>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/forwarding_actor_proxy.hpp>
#include <caf/make_actor.hpp>
#include <caf/message_view.hpp>
#include <caf/node_id.hpp>

namespace test {

// A node id that is not this process's: host bytes all `b`, process 4000 + b.
inline caf::node_id other_node(std::uint8_t b) {
  caf::node_id::default_data::host_id_type host;
  host.fill(b);
  return caf::make_node_id(4000 + b, host);
}

struct foreign_peer {
  caf::actor handle;                                         // send_as(handle, ...)
  std::shared_ptr<std::vector<caf::message>> replies =       // what came back
    std::make_shared<std::vector<caf::message>>();
  caf::actor sink;
};

inline foreign_peer make_foreign_peer(caf::actor_system& sys, const caf::node_id& n) {
  foreign_peer p;
  auto got = p.replies;
  p.sink = sys.spawn(
    [](caf::event_based_actor* self, std::shared_ptr<std::vector<caf::message>> got) {
      // The proxy forwards (forward_atom, sender, stack, receiver, id, msg).
      self->set_default_handler([got](caf::scheduled_actor*, caf::message_view& x) -> caf::result<caf::message> {
        auto m = x.move_content_to_message();
        if (m.size() == 6 && m.match_element<caf::message>(5))
          got->push_back(m.get_as<caf::message>(5));
        return caf::message{};
      });
      return caf::behavior{[](caf::exit_msg&) {}};
    },
    got);
  caf::actor_config cfg;
  p.handle = caf::actor_cast<caf::actor>(
    caf::make_actor<caf::forwarding_actor_proxy, caf::strong_actor_ptr>(sys.next_actor_id(), n,
                                                                         &sys, cfg, p.sink));
  return p;
}

} // namespace test
