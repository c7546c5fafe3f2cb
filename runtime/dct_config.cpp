#include "runtime/dct_config.hpp"

namespace runtime {

void add_dct_options(option_set& o) {
  using t = opt_type;
  o.add({"dct.dp", t::boolean, "false",
         "DCT on the dense sync: each EASGD exchange carries only the entries of the replica's "
         "change above a threshold, and the dense shard replies only the largest entries of d "
         "(sync.algorithm s-easgd or fr-easgd; docs/dct.md)"});
  o.add({"dct.dp-keep", t::real, "0.03",
         "dct.dp: the fraction of a range's entries the threshold lets through", {}, 1e-6, 1.0});
  o.add({"dct.refresh", t::integer, "10",
         "dct.dp: rounds between re-estimates of the threshold, at the syncer and at the dense "
         "shard (from a sample of at most 4096 entries)",
         {}, 1.0, 1e12});
  o.add({"dct.error-feedback", t::boolean, "true",
         "dct.dp: what the threshold held back is carried into later rounds (false: dropped)"});
}

std::optional<std::string> build_dct_settings(const option_set& o, const std::string& mode,
                                              model::sync_algorithm algorithm,
                                              model::dct_settings& out) {
  out.dp = o.get_bool("dct.dp");
  out.dp_keep = o.get_real("dct.dp-keep");
  out.refresh = std::uint64_t(o.get_int("dct.refresh"));
  out.error_feedback = o.get_bool("dct.error-feedback");
  if (!out.dp)
    return std::nullopt;
  if (mode == "sequential")
    return "option 'dct.dp' = true (" + o.source("dct.dp") +
           ") compresses the dense sync between trainers: it needs cluster.mode simulated or "
           "multi-node, not sequential";
  if (!model::is_easgd(algorithm))
    return "option 'dct.dp' = true (" + o.source("dct.dp") +
           ") is built for sync.algorithm s-easgd and fr-easgd, not " +
           o.get_string("sync.algorithm") +
           " (DCT for the ring methods, a sparse all-gather, is not built yet)";
  return std::nullopt;
}

} // namespace runtime
