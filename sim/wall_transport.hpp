#pragma once
// The network model under the wall clock (sim.clock=wall, net.enabled): the
// host_fabric of a simulated cluster whose actors run on CAF's ordinary
// scheduler. Every role spawned with actors::spawn_role is placed on its
// host; a message from a role on one host to a role on another is held by
// the transport for its network_model::transfer delay: the transport keeps
// it and schedules a small token (its number) to the receiver on the actor
// clock; when the token reaches the receiver's mailbox the transport swaps
// the message in. The roles send as usual and never see it.
//
// Order: per link the model's arrivals never overtake each other, and the
// actor clock delivers equal times in the order they were scheduled, so
// CAF's per-sender FIFO order holds.
//
// faults.freeze under the wall clock: messages to a frozen host wait in the
// transport, in their arrival order, until thaw(); the handlers running at
// the freeze finish (a handler is not preempted).
//
// Thread safety: intercept() runs on any scheduler thread and on the clock's
// thread; one mutex guards the placement, the delayed set and the frozen
// queues.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex> // recursive_mutex
#include <unordered_map>
#include <vector>

#include <caf/actor_control_block.hpp>
#include <caf/mailbox_element.hpp>

#include "actors/sim_host.hpp"
#include "sim/network_model.hpp"

namespace runtime {

class wall_transport final : public actors::host_fabric {
public:
  // `net` (null: no network model, only freezes) must outlive the transport.
  explicit wall_transport(network_model* net, std::size_t hosts);

  bool intercept(caf::abstract_actor* receiver, caf::mailbox_element_ptr& what) override;
  void place(caf::actor_id id, std::size_t host) override;
  void count(actors::work, double, double, double) override {} // real work, real time
  std::optional<double> store_seconds(double, double) override { return std::nullopt; }
  actors::execution how() const override { return {}; }

  // faults.freeze: hold every message for `host` until thaw(host).
  void freeze(std::size_t host);
  // Delivers what the freeze held, in order. Nothing when not frozen.
  void thaw(std::size_t host);


private:
  struct held {
    caf::strong_actor_ptr receiver;
    caf::mailbox_element_ptr what;
  };
  network_model* net_;
  std::recursive_mutex mtx_; // thaw() enqueues under it, which re-enters intercept()
  std::unordered_map<caf::actor_id, std::size_t> hosts_;
  std::unordered_map<std::uint64_t, caf::mailbox_element_ptr> in_flight_; // by token
  std::uint64_t next_token_ = 0;
  bool thawing_ = false; // thaw() is enqueueing: let it through
  std::vector<bool> frozen_;
  std::vector<std::deque<held>> waiting_; // per frozen host
};

} // namespace runtime
