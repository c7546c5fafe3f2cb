#include "config/dct_config.hpp"

#include "model/dense_layout.hpp"

namespace runtime {

// dct.dp-ring=auto: the all-gather up to this many trainers, the reduce
// above. Measured (docs/dct.md, 200 000 rows, two sets): at 4 trainers the
// gather keeps S-MA within 0.5 % at 155-157x and the reduce does not (+0.84 %
// on one set); at 8 and 16 the gather sends N - 1 changes a round (72-78x,
// 24-29x) and the reduce 221-234x and 146-173x within 1 %.
constexpr std::int64_t auto_gather_trainers = 4;

void add_dct_options(option_set& o) {
  using t = opt_type;
  o.add({"dct.dp", t::boolean, "false",
         "DCT on the dense sync: each EASGD exchange carries only the entries of the replica's "
         "change above a threshold, and the dense shard replies only the largest entries of d; "
         "MA and BMUF send thresholded changes round the ring instead of the dense all-reduce "
         "(dct.dp-ring; docs/dct.md)"});
  o.add({"dct.dp-keep", t::real, "0.003",
         "dct.dp: the fraction of a range's entries the threshold lets through", {}, 1e-6, 1.0});
  o.add({"dct.dp-reply-keep", t::real, "0.025",
         "dct.dp with EASGD: the fraction of d's entries the dense shard's reply threshold lets "
         "through (0: dct.dp-keep)", {}, 0.0, 1.0});
  o.add({"dct.dp-reduce-keep", t::real, "0.006",
         "dct.dp with the reduce (dct.dp-ring): the fraction of a chunk's entries each step's "
         "threshold lets through (0: dct.dp-keep)", {}, 0.0, 1.0});
  o.add({"dct.dp-reply", t::string, "d",
         "dct.dp with EASGD: what the dense shard replies. centre: the entries of the centre's "
         "change since the trainer last heard (those above a threshold at dct.dp-reply-keep), "
         "and the trainer pulls its replica toward that picture of the centre itself, dense; "
         "d: the largest entries of the elastic step d, applied as they are (docs/dct.md)",
         {"centre", "d"}});
  o.add({"dct.dp-ring", t::string, "auto",
         "dct.dp with MA or BMUF: how the thresholded changes go round the ring. gather: each "
         "trainer's change travels the ring once (N - 1 payloads of dct.dp-keep of the replica "
         "per trainer and round); reduce: a ring reduce-scatter whose partial sums are "
         "thresholded again at every step, then an all-gather of each chunk's thresholded sum "
         "(2 (N - 1) payloads of dct.dp-reduce-keep of a chunk, 1/N of the replica), what a "
         "step does not pass on waiting with the trainer for its next round; auto: gather up "
         "to 4 trainers, reduce above (docs/dct.md)",
         {"auto", "gather", "reduce"}});
  o.add({"dct.per-layer", t::boolean, "true",
         "dct.dp: one threshold per layer of the MLPs (each layer's weights and bias) within a "
         "range, each estimated from that layer's entries; false: one per range (EASGD) or per "
         "replica (MA, BMUF)"});
  o.add({"dct.refresh", t::integer, "10",
         "dct.dp: rounds (at the syncer and at the dense shard) between re-estimates of a "
         "threshold, from a sample of at most 4096 entries",
         {}, 1.0, 1e12});
  o.add({"dct.mp-refresh", t::integer, "0",
         "dct.mp: lookups that touch a table (at each embedding shard) or pushes (at each "
         "worker) between re-estimates of a threshold, from a sample of at most 4096 entries; "
         "1 estimates each reply's and push's thresholds from its own entries; 0 = derived: 1 "
         "when train.batch-size is below 128 (a reply holds few rows of a table), else 10",
         {}, 0.0, 1e12});
  o.add({"dct.error-feedback", t::boolean, "true",
         "what a threshold held back is carried into later rounds (false: dropped): dct.dp's "
         "exchanges, and dct.mp's pushes with dct.mp-backward=straight (mask pushes have "
         "nothing to carry: they are the exact gradient of the rows received)"});
  o.add({"dct.half", t::boolean, "true",
         "values cross the wire in half precision (IEEE binary16, rounded to nearest even) "
         "where error feedback carries the rounding's error to a later round: dct.dp, and "
         "dct.mp's straight pushes, with dct.error-feedback on; f32 elsewhere (lookup replies, "
         "mask pushes)"});
  o.add({"dct.log8", t::boolean, "true",
         "dct.dp with error feedback: values cross the wire as 8-bit logarithms, sign and level l "
         "of scale x 2^(l/8) (scale: the payload's smallest magnitude; steps of 9 %), the "
         "rounding's error carried like the rest; wins over dct.half there"});
  o.add({"dct.mp", t::boolean, "false",
         "DCT on the embedding traffic: a lookup reply carries only the row entries above their "
         "table's threshold, and a push only the gradients of those entries (cluster.mode "
         "simulated or multi-node; docs/dct.md)"});
  o.add({"dct.mp-keep", t::real, "0.12",
         "dct.mp: the fraction of a reply's row entries each table's threshold lets through",
         {}, 1e-6, 1.0});
  o.add({"dct.mp-backward", t::string, "straight",
         "dct.mp: what a push carries. mask (the paper's): the gradients of the row entries "
         "received, the exact gradient of the thresholded rows, with nothing to carry over. "
         "straight: every entry's gradient as if nothing were thresholded, thresholded at "
         "dct.mp-grad-keep per table, with per-row error feedback at the worker "
         "(dct.error-feedback)",
         {"mask", "straight"}});
  o.add({"dct.mp-half-rows", t::boolean, "true",
         "dct.mp: the values of a lookup reply cross the wire in half precision (rounded to "
         "nearest even); the worker trains on the rounded rows, as on the thresholded ones"});
  o.add({"dct.mp-drop-rows", t::boolean, "true",
         "dct.mp: a push names only the rows it carries a gradient entry of (a row-wise step of "
         "a zero gradient changes nothing); false: every row of the batch's lookup"});
  o.add({"dct.mp-push-places", t::boolean, "true",
         "dct.mp: a push names its rows by their place in the batch's lookup (the shard keeps "
         "each worker's last 8 lookups) instead of by their 8-byte keys; a push whose shard "
         "was replaced since the lookup names them by key"});
  o.add({"dct.mp-grad-keep", t::real, "0.01",
         "dct.mp-backward=straight: the fraction of a push's gradient entries each table's "
         "threshold lets through",
         {}, 1e-6, 1.0});
}

std::optional<std::string> build_dct_settings(const option_set& o, cluster_mode mode,
                                              model::sync_algorithm algorithm,
                                              model::dct_settings& out) {
  out.dp = o.get_bool("dct.dp");
  out.dp_keep = o.get_real("dct.dp-keep");
  out.dp_reply_keep = o.get_real("dct.dp-reply-keep");
  out.dp_reduce_keep = o.get_real("dct.dp-reduce-keep");
  out.dp_centre = o.get_string("dct.dp-reply") == "centre";
  out.dp_alpha = o.get_real("sync.alpha") > 0 ? float(o.get_real("sync.alpha")) : 0.25f; // as sync
  out.per_layer = o.get_bool("dct.per-layer");
  const auto ring = o.get_string("dct.dp-ring");
  out.dp_ring_reduce =
    ring == "reduce" || (ring == "auto" && o.get_int("cluster.trainers") > auto_gather_trainers);
  out.refresh = std::uint64_t(o.get_int("dct.refresh"));
  out.mp_refresh = std::uint64_t(o.get_int("dct.mp-refresh"));
  out.error_feedback = o.get_bool("dct.error-feedback");
  out.half = o.get_bool("dct.half");
  out.log8 = o.get_bool("dct.log8");
  out.mp = o.get_bool("dct.mp");
  out.mp_keep = o.get_real("dct.mp-keep");
  out.mp_straight = o.get_string("dct.mp-backward") == "straight";
  out.mp_grad_keep = o.get_real("dct.mp-grad-keep");
  out.mp_half_rows = o.get_bool("dct.mp-half-rows");
  out.mp_drop_rows = o.get_bool("dct.mp-drop-rows");
  out.mp_push_places = o.get_bool("dct.mp-push-places");
  if (out.mp && mode == cluster_mode::sequential)
    return "option 'dct.mp' = true (" + o.source("dct.mp") +
           ") compresses the traffic between workers and embedding shards: it needs "
           "cluster.mode simulated or multi-node, not sequential";
  if (!out.dp)
    return std::nullopt;
  if (mode == cluster_mode::sequential)
    return "option 'dct.dp' = true (" + o.source("dct.dp") +
           ") compresses the dense sync between trainers: it needs cluster.mode simulated or "
           "multi-node, not sequential";
  if (!model::is_easgd(algorithm) && !model::uses_ring(algorithm))
    return "option 'dct.dp' = true (" + o.source("dct.dp") +
           ") thresholds a dense sync: sync.algorithm " + o.get_string("sync.algorithm") +
           " has none (EASGD, MA and BMUF do)";
  return std::nullopt;
}

std::uint64_t auto_mp_refresh(std::size_t batch_size) {
  return batch_size < 128 ? 1 : 10;
}

std::vector<std::size_t> dct_layer_starts(const model::arch& a) {
  const model::dense_layout l(a);
  std::vector<std::size_t> starts;
  for (const auto& x : l.bottom())
    starts.push_back(x.w);
  for (const auto& x : l.cross())
    starts.push_back(x.v);
  for (const auto& x : l.top())
    starts.push_back(x.w);
  return starts;
}

} // namespace runtime
