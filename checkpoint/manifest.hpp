#pragma once
// manifest.json of a checkpoint folder (nlohmann-json):
//   {
//     "format": "shadowsync-checkpoint", "version": 1,
//     "config": "<effective INI of the run>",
//     "mode": "sequential" | "simulated",
//     "examples": N,                     // examples trained before the cut
//     "readers": [{"part": 0, "parts": 1, "epoch": e, "examples": n,
//                  "lines": l, "malformed": m, "served": s,
//                  "cut_bags": b}],      // position of each reader
//     "rng": {"model_seed": s, ...},     // seeds; training draws no numbers
//     "metrics": {"loss_sum": ..., "prob_sum": ..., "positives": ...,
//                 "malformed": ..., "cut_bags": ..., "seconds": ...},  // the run so far
//     ("served" and "cut_bags" read as 0 where absent: older checkpoints)
//     "files": [{"name": "embedding-0.bin", "bytes": b, "crc32c": c}]
//   }
// Doubles are stored as JSON numbers with 17 significant digits (nlohmann
// round-trips them exactly).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/array_file.hpp"

namespace checkpoint {

constexpr int manifest_version = 1;

struct reader_position {
  std::uint64_t part = 0, parts = 1;
  std::uint64_t epoch = 0;    // passes completed before this one
  std::uint64_t examples = 0; // examples served in the current pass
  std::uint64_t lines = 0;    // data lines consumed in the current pass
  std::uint64_t malformed = 0; // malformed lines skipped in earlier passes
  std::uint64_t served = 0;    // examples served in all passes (cluster readers)
  std::uint64_t cut_bags = 0;  // bags cut to data.max-ids in earlier passes
};

struct run_counters {
  double loss_sum = 0, prob_sum = 0; // train NE accumulator
  std::uint64_t positives = 0;
  std::uint64_t malformed = 0;       // lines skipped, all passes so far
  double seconds = 0;                // training time so far
  std::uint64_t cut_bags = 0;        // bags cut to data.max-ids, all passes so far
};

struct manifest {
  int version = manifest_version;
  std::string config_ini;
  std::string mode;
  std::uint64_t examples = 0;
  std::vector<reader_position> readers;
  std::uint64_t model_seed = 0;
  run_counters counters;
  std::vector<file_info> files;
};

std::string to_json(const manifest& m);
// Parses manifest.json text; the error names `path` and the field.
std::optional<std::string> parse_manifest(const std::string& text, const std::string& path,
                                          manifest& out);

} // namespace checkpoint
