#include "sim/work_costs.hpp"

#include <cmath>

namespace runtime {

namespace {

work_cost bytes(double b) {
  work_cost c;
  c.bytes = b;
  return c;
}

work_cost timed(double seconds) {
  work_cost c;
  c.seconds = seconds;
  c.timed = true;
  return c;
}

// The dense sync's traffic: at sync_gbps where calibrated (the replica's
// vectors stay in the caches), else as memory traffic.
work_cost sync_bytes(double b, const virtual_settings& host) {
  return host.sync_gbps > 0 ? timed(b / (host.sync_gbps * 1e9)) : bytes(b);
}

work_cost per_row(double rows, double ns, double bytes_if_uncalibrated) {
  return ns > 0 ? timed(rows * ns * 1e-9) : bytes(bytes_if_uncalibrated);
}

} // namespace

double mp_push_ns(const virtual_settings& host, double map_rows) {
  const double small = host.mp_push_value_ns, big = host.mp_push_value_big_ns;
  const double from = host.mp_push_map_rows;
  if (small <= 0 || big <= 0 || from <= 0 || from >= mp_push_big_map_rows || map_rows <= from)
    return small;
  if (map_rows >= mp_push_big_map_rows)
    return big;
  return small + (big - small) * std::log(map_rows / from) / std::log(mp_push_big_map_rows / from);
}

work_cost cost_of(actors::work kind, double items, double width, double more,
                  const virtual_settings& host) {
  using actors::work;
  switch (kind) {
    case work::arithmetic: {
      work_cost c;
      c.flops = items;
      return c;
    }
    case work::parse_examples: // parsing: calibrated, or about 2 KB of memory traffic an example
      return per_row(items, host.parse_example_ns, 2048.0 * items);
    case work::prepare_batch: // calibrated (sim.batch-id-ns), else not charged
      return per_row(items, host.batch_id_ns, 0.0);
    case work::train_examples: {
      // Forward and backward (about three forward passes), and the dense
      // step's reads and writes of parameters, gradients and state.
      work_cost c;
      c.flops = 3.0 * width * items;
      c.bytes = 16.0 * more;
      return c;
    }
    case work::sparse_encode: // residuals, the threshold and the encoding; more: the map's rows
      return per_row(items, mp_push_ns(host, more), 12.0 * items);
    case work::lookup_rows: // the rows read and copied out
      return per_row(items, host.lookup_row_ns, 4.0 * width * items);
    case work::push_rows: // rows, optimiser state and gradients
      return per_row(items, host.push_row_ns, 12.0 * width * items);
    case work::sparse_lookup: // the threshold pass, its estimates and the encoding
      return per_row(items * width, host.mp_reply_value_ns, 8.0 * (items * width));
    case work::sparse_decode: // the decode and the scatter, per value of the dense size
      return per_row(items * width, host.mp_decode_value_ns, 4.0 * (items * width));
    case work::snapshot: // the copy
      return sync_bytes(8.0 * items, host);
    case work::merge:
      return sync_bytes(16.0 * items, host);
    case work::elastic_update:
      return sync_bytes(12.0 * items, host);
    case work::sparse_exchange:
      // decode, the elastic update, the threshold pass (8 entries tested at
      // once), the estimate every dct.refresh rounds and the encode: bench_dct
      // times the whole round at 65-66 bytes of memcpy traffic an entry
      return sync_bytes(66.0 * items + 2.0 * more, host);
    case work::dense_delta:
      // w - image (12 bytes an entry) and the threshold pass (40). bench_dct
      // times the syncer's whole round (with the estimate, the encode and the
      // reply's decode and scatter) at 65-69 at keep 0.003: not re-derived
      // yet (docs/dct.md)
      return sync_bytes(52.0 * items, host);
    case work::sparse_relay: // decode, and pass it on
      return sync_bytes(8.0 * items, host);
    case work::ring_reduce: // reduce or copy
    case work::ring_sum:    // the sum and the target
      return sync_bytes(12.0 * items, host);
    case work::checkpoint_gather: // the rows gathered into the file
    case work::checkpoint_load:
      return bytes(items);
    case work::cut_copy: // read and write
      return bytes(2.0 * items);
  }
  return {};
}

} // namespace runtime
