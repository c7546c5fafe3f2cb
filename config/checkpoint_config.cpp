#include "config/checkpoint_config.hpp"

namespace runtime {

void add_checkpoint_options(option_set& o) {
  using t = opt_type;
  o.add({"checkpoint.dir", t::string, "",
         "write checkpoints into this folder (empty = none); one more at the end of training"});
  o.add({"checkpoint.every-examples", t::integer, "0",
         "a checkpoint after every N training examples (0 = not by examples)", {}, 0.0});
  o.add({"checkpoint.every-seconds", t::real, "0",
         "a checkpoint every S seconds of training (0 = not by time; at most 1e9, 31.7 years)",
         {}, 0.0, max_duration_seconds});
  o.add({"checkpoint.keep", t::integer, "3", "keep the newest K checkpoints", {}, 1.0, 1e6});
  o.add({"checkpoint.background", t::boolean, "true",
         "write periodic checkpoints from a second thread while training goes on (rows changed "
         "meanwhile are copied first); false: training waits for each write"});
  o.add({"checkpoint.resume", t::string, "",
         "continue from this checkpoint folder, or the newest one in this checkpoint dir "
         "(also --resume=PATH)"});
  o.add({"checkpoint.new-data", t::boolean, "false",
         "with checkpoint.resume onto other data.train files than the checkpoint's run: train "
         "them from their beginning (the model, examples and train NE carry over); without it "
         "such a resume is refused"});
  o.add({"output.model", t::string, "",
         "write the final model here (a checkpoint dir; for predict, eval and resume)"});
}

std::optional<std::string> build_checkpoint_settings(const option_set& o, cluster_mode mode,
                                                     checkpoint_settings& out) {
  out.dir = o.get_string("checkpoint.dir");
  out.every_examples = std::uint64_t(o.get_int("checkpoint.every-examples"));
  out.every_seconds = o.get_real("checkpoint.every-seconds");
  out.keep = std::size_t(o.get_int("checkpoint.keep"));
  out.background = o.get_bool("checkpoint.background");
  out.resume = o.get_string("checkpoint.resume");
  out.new_data = o.get_bool("checkpoint.new-data");
  out.model_out = o.get_string("output.model");
  // (An effective INI sets every key, so values are checked, not sources.)
  for (const char* k : {"checkpoint.every-examples", "checkpoint.every-seconds"})
    if (out.dir.empty() && o.value_text(k) != "0")
      return std::string("option '") + k + "' = " + o.value_text(k) + " (" + o.source(k) +
             ") needs checkpoint.dir, the folder to write checkpoints into";
  if (mode == cluster_mode::simulated && !out.dir.empty() && !out.background)
    return "option 'checkpoint.background' = false (" + o.source("checkpoint.background") +
           "): the simulated cluster always writes in the background (each embedding shard "
           "beside its own training; cluster_cut.hpp)";
  return std::nullopt;
}

} // namespace runtime
