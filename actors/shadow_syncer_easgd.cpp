// The EASGD half of the shadow syncer (s-easgd, fr-easgd): one exchange
// per dense shard range, each reply d applied in place (w -= d); the round
// completes with the last reply. With dct.dp the exchange carries the
// thresholded change of the range instead, and the reply the thresholded
// change of the centre, toward which the syncer pulls the range in place
// (dct.dp-reply=centre), or the thresholded pull the shard owes the trainer
// (=d: this round's d and what earlier replies held back; model/dct_sync.hpp).
// See shadow_syncer.hpp.
#include "actors/shadow_syncer.hpp"

#include <string>

#include <caf/sec.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/work.hpp"
#include "messages/errors.hpp"

namespace actors {

using messages::errc;

void syncer_state::start_easgd() {
  easgd.replies_pending = cfg.dense_ranges.size();
  if (easgd.replies_pending == 0) {
    finish_round();
    return;
  }
  auto count_sent = [this](std::uint64_t bytes) {
    stats.bytes_sent += bytes;
    if (cfg.sent_bytes)
      cfg.sent_bytes->fetch_add(bytes, std::memory_order_relaxed);
  };
  for (std::size_t i = 0; i < cfg.dense_ranges.size(); ++i) {
    const auto r = cfg.dense_ranges[i];
    auto on_error = [this, i](caf::error& err) { on_exchange_error(i, err); };
    if (cfg.dct.dp) {
      count(work::dense_delta, double(r.size));
      messages::sparse_range req;
      req.offset = r.offset;
      req.trainer = cfg.trainer;
      // w - image straight from the live replica (each entry read once, as
      // the dense path's copy reads it): no snapshot of the range
      req.payload.values =
        model::encode(easgd.senders[i].encode_change(cfg.replica->params() + r.offset));
      count_sent(req.payload.bytes());
      self->request(cfg.dense_shards[i], cfg.timeout, messages::exchange_atom::value,
                    std::move(req))
        .then([this, i](messages::sparse_range& d) { on_sparse_reply(i, d); }, on_error);
      continue;
    }
    messages::dense_range req;
    req.offset = r.offset;
    req.values.values.resize(r.size); // the snapshot of this range
    cfg.replica->copy_out(r.offset, r.size, req.values.data());
    count_sent(req.values.bytes());
    self->request(cfg.dense_shards[i], cfg.timeout, messages::exchange_atom::value, std::move(req))
      .then([this, i](messages::dense_range& d) { on_exchange_reply(i, d); }, on_error);
  }
}

void syncer_state::on_exchange_error(std::size_t shard, caf::error& err) {
  if (messages::is_project_error(err)) { // the shard's own error, as it is
    fail(std::move(err));
    return;
  }
  const auto what = "dense shard " + std::to_string(shard);
  const auto code = messages::request_failure(err, errc::shard_down);
  if (code == errc::request_timeout)
    fail(code, what + ": no reply within " + std::to_string(cfg.timeout.count()) + " ms");
  else if (err == caf::sec::request_receiver_down)
    fail(code, what + " is down");
  else
    fail(code, what + ": " + self->system().render(err));
}

void syncer_state::on_exchange_reply(std::size_t shard, messages::dense_range& d) {
  const auto r = cfg.dense_ranges[shard];
  if (d.offset != r.offset || d.values.size() != r.size) {
    fail(errc::bad_request,
         "dense shard " + std::to_string(shard) + " replied with a range of the wrong shape");
    return;
  }
  stats.bytes_received += d.values.bytes();
  cfg.replica->subtract(r.offset, d.values.data(), r.size); // the live buffer: w -= d
  if (--easgd.replies_pending == 0)
    finish_round();
}

void syncer_state::on_sparse_reply(std::size_t shard, messages::sparse_range& d) {
  const auto r = cfg.dense_ranges[shard];
  model::sparse_vector reply;
  const auto bad = d.offset != r.offset
                     ? std::optional<std::string>("offset " + std::to_string(d.offset) +
                                                  ", expected " + std::to_string(r.offset))
                     : model::decode(d.payload.data(), d.payload.size(),
                                     std::uint32_t(r.size), reply);
  if (bad) {
    fail(errc::bad_request, "dense shard " + std::to_string(shard) + " replied with a DCT " +
                              "range that does not fit: " + *bad);
    return;
  }
  stats.bytes_received += d.payload.bytes();
  stats.dct_replied += reply.nnz();
  stats.dct_replied_of += r.size;
  auto& sender = easgd.senders[shard];
  if (cfg.dct.dp_centre) { // r is the centre's change: pull the live buffer toward c
    sender.on_reply(reply);
    count(work::elastic_update, double(r.size));
    cfg.replica->subtract(r.offset, sender.pull(cfg.replica->params() + r.offset).data(), r.size);
  } else {
    cfg.replica->subtract_sparse(r.offset, reply); // the live buffer: w -= r
    sender.on_reply(reply);
  }
  if (--easgd.replies_pending == 0)
    finish_round();
}

} // namespace actors
