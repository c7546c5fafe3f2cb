#include "sim/wall_transport.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_clock.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/type_erased_tuple.hpp>

#include "messages/wire_size.hpp"

namespace runtime {

namespace {
// The token that stands for a held message on the actor clock.
using transport_atom = caf::atom_constant<caf::atom("transport")>;
} // namespace

wall_transport::wall_transport(network_model* net, std::size_t hosts)
  : net_(net), frozen_(hosts, false), waiting_(hosts) {}

void wall_transport::place(caf::actor_id id, std::size_t host) {
  std::lock_guard<std::recursive_mutex> guard(mtx_);
  hosts_[id] = host;
}

bool wall_transport::intercept(caf::abstract_actor* receiver, caf::mailbox_element_ptr& what) {
  std::unique_lock<std::recursive_mutex> guard(mtx_);
  if (thawing_)
    return false;
  const auto to = hosts_.find(receiver->id());
  if (to == hosts_.end())
    return false;
  auto& m = what->content();
  if (m.match_elements<transport_atom, std::uint64_t>()) { // a held message is due
    auto i = in_flight_.find(m.get_as<std::uint64_t>(1));
    if (i == in_flight_.end())
      return true; // (cannot happen: one token per message)
    what = std::move(i->second);
    in_flight_.erase(i);
  } else { // a message sent now: the network between the hosts
    std::size_t from = to->second;
    if (what->sender)
      if (auto i = hosts_.find(what->sender->id()); i != hosts_.end())
        from = i->second;
    if (net_ && from != to->second) {
      auto& clock = receiver->home_system().clock();
      const auto now = clock.now();
      const auto d = net_->transfer(from, to->second, messages::wire_bytes(m), now);
      if (d.count() > 0) {
        const auto token = next_token_++;
        in_flight_.emplace(token, std::move(what));
        guard.unlock(); // the clock's thread calls intercept() with its own lock held
        clock.schedule_message(now + d, caf::strong_actor_ptr{receiver->ctrl()},
                               caf::make_mailbox_element(nullptr, caf::make_message_id(), {},
                                                         transport_atom::value, token));
        return true;
      }
    }
  }
  if (frozen_[to->second]) { // arrived at a frozen host: wait for the thaw
    waiting_[to->second].push_back({caf::strong_actor_ptr{receiver->ctrl()}, std::move(what)});
    return true;
  }
  return false;
}

void wall_transport::freeze(std::size_t host) {
  std::lock_guard<std::recursive_mutex> guard(mtx_);
  frozen_.at(host) = true;
}

void wall_transport::thaw(std::size_t host) {
  // Under the lock: nothing newer may reach the host before these.
  std::lock_guard<std::recursive_mutex> guard(mtx_);
  if (!frozen_.at(host))
    return;
  frozen_[host] = false;
  auto out = std::move(waiting_[host]);
  waiting_[host].clear();
  thawing_ = true;
  for (auto& h : out)
    if (auto* a = caf::actor_cast<caf::abstract_actor*>(h.receiver))
      a->enqueue(std::move(h.what), nullptr);
  thawing_ = false;
}

} // namespace runtime
