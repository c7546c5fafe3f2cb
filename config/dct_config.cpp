#include "config/dct_config.hpp"

namespace runtime {

void add_dct_options(option_set& o) {
  using t = opt_type;
  o.add({"dct.dp", t::boolean, "false",
         "DCT on the dense sync: each EASGD exchange carries only the entries of the replica's "
         "change above a threshold, and the dense shard replies only the largest entries of d; "
         "MA and BMUF all-gather each trainer's thresholded change round the ring instead of "
         "the dense all-reduce (docs/dct.md)"});
  o.add({"dct.dp-keep", t::real, "0.003",
         "dct.dp: the fraction of a range's entries the threshold lets through", {}, 1e-6, 1.0});
  o.add({"dct.dp-reply-keep", t::real, "0.03",
         "dct.dp with EASGD: the fraction of d's entries the dense shard's reply threshold lets "
         "through (0: dct.dp-keep)", {}, 0.0, 1.0});
  o.add({"dct.refresh", t::integer, "10",
         "rounds (dct.dp: at the syncer and at the dense shard) or lookups that touch a table "
         "(dct.mp: at each embedding shard) between re-estimates of a threshold, from a sample "
         "of at most 4096 entries",
         {}, 1.0, 1e12});
  o.add({"dct.error-feedback", t::boolean, "true",
         "what a threshold held back is carried into later rounds (false: dropped): dct.dp's "
         "exchanges, and dct.mp's pushes with dct.mp-backward=straight (mask pushes have "
         "nothing to carry: they are the exact gradient of the rows received)"});
  o.add({"dct.half", t::boolean, "true",
         "values cross the wire in half precision (IEEE binary16, rounded to nearest even) "
         "where error feedback carries the rounding's error to a later round: dct.dp, and "
         "dct.mp's straight pushes, with dct.error-feedback on; f32 elsewhere (lookup replies, "
         "mask pushes)"});
  o.add({"dct.mp", t::boolean, "false",
         "DCT on the embedding traffic: a lookup reply carries only the row entries above their "
         "table's threshold, and a push only the gradients of those entries (cluster.mode "
         "simulated or multi-node; docs/dct.md)"});
  o.add({"dct.mp-keep", t::real, "0.1",
         "dct.mp: the fraction of a reply's row entries each table's threshold lets through",
         {}, 1e-6, 1.0});
  o.add({"dct.mp-backward", t::string, "straight",
         "dct.mp: what a push carries. mask (the paper's): the gradients of the row entries "
         "received, the exact gradient of the thresholded rows, with nothing to carry over. "
         "straight: every entry's gradient as if nothing were thresholded, thresholded at "
         "dct.mp-grad-keep per table, with per-row error feedback at the worker "
         "(dct.error-feedback)",
         {"mask", "straight"}});
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
  out.refresh = std::uint64_t(o.get_int("dct.refresh"));
  out.error_feedback = o.get_bool("dct.error-feedback");
  out.half = o.get_bool("dct.half");
  out.mp = o.get_bool("dct.mp");
  out.mp_keep = o.get_real("dct.mp-keep");
  out.mp_straight = o.get_string("dct.mp-backward") == "straight";
  out.mp_grad_keep = o.get_real("dct.mp-grad-keep");
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

} // namespace runtime
