// The EASGD half of the shadow syncer (s-easgd, fr-easgd): one exchange
// per dense shard range, each reply d applied in place (w -= d); the round
// completes with the last reply. See shadow_syncer.hpp.
#include "actors/shadow_syncer.hpp"

#include <string>

#include <caf/sec.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "messages/errors.hpp"

namespace actors {

using messages::errc;

void syncer_state::start_easgd() {
  replies_pending = cfg.dense_ranges.size();
  if (replies_pending == 0) {
    finish_round();
    return;
  }
  for (std::size_t i = 0; i < cfg.dense_ranges.size(); ++i) {
    const auto r = cfg.dense_ranges[i];
    messages::dense_range req;
    req.offset = r.offset;
    req.values.values.resize(r.size); // the snapshot of this range
    cfg.replica->copy_out(r.offset, r.size, req.values.data());
    stats.bytes_sent += req.values.bytes();
    if (cfg.sent_bytes)
      cfg.sent_bytes->fetch_add(req.values.bytes(), std::memory_order_relaxed);
    self->request(cfg.dense_shards[i], cfg.timeout, messages::exchange_atom::value, std::move(req))
      .then([this, i](messages::dense_range& d) { on_exchange_reply(i, d); },
            [this, i](caf::error& err) {
              const auto what = "dense shard " + std::to_string(i);
              if (err == caf::sec::request_timeout)
                fail(errc::request_timeout, what + ": no reply within " +
                                              std::to_string(cfg.timeout.count()) + " ms");
              else if (err == caf::sec::request_receiver_down)
                fail(errc::shard_down, what + " is down");
              else if (err.category() == messages::error_category)
                fail(std::move(err));
              else
                fail(errc::shard_down, what + ": " + self->system().render(err));
            });
  }
}

void syncer_state::on_exchange_reply(std::size_t shard, messages::dense_range& d) {
  const auto r = cfg.dense_ranges[shard];
  if (d.offset != r.offset || d.values.size() != r.size) {
    fail(errc::bad_request,
         "dense shard " + std::to_string(shard) + " replied with a range of the wrong shape");
    return;
  }
  cfg.replica->subtract(r.offset, d.values.data(), r.size); // the live buffer: w -= d
  if (--replies_pending == 0)
    finish_round();
}

} // namespace actors
