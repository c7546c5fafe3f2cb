#include "actors/authority.hpp"

#include <atomic>

#include <spdlog/spdlog.h>

#include "actors/peer.hpp"
#include "messages/errors.hpp"
#include "messages/node_messages.hpp"

namespace actors {

using messages::sent_from; // the sender is an actor of that node

bool authority::directs(const caf::strong_actor_ptr& s, const caf::node_id& here) const {
  return sent_from(s, here) || (director && sent_from(s, director));
}

bool authority::data_plane(const caf::strong_actor_ptr& s, const caf::node_id& here) const {
  if (directs(s, here))
    return true;
  for (const auto& n : trainer_nodes)
    if (n && sent_from(s, n))
      return true;
  return false;
}

bool authority::speaks_for(const caf::strong_actor_ptr& s, std::uint32_t trainer,
                           const caf::node_id& here) const {
  if (sent_from(s, here))
    return true;
  return trainer < trainer_nodes.size() && trainer_nodes[trainer] &&
         sent_from(s, trainer_nodes[trainer]);
}

caf::error refuse_sender(const std::string& role, const std::string& what,
                         const caf::strong_actor_ptr& sender, const std::string& only) {
  static std::atomic<std::uint64_t> refused{0};
  const auto n = ++refused;
  const auto text = role + " refused " + what + " from " + peer_name(sender) + ": only " + only +
                    " may send it";
  if (n <= 20 || n % 1000 == 0)
    spdlog::error("{} (refusal {} of this process)", text, n);
  return messages::make_error(messages::errc::bad_request, text);
}

} // namespace actors
