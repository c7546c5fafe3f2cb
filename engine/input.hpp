#pragma once
// Opening the run's input with its schema and reporting malformed lines.
#include <memory>
#include <string>
#include <vector>

#include "data/reader.hpp"
#include "config/train_config.hpp"

namespace runtime {

// Reader options for `files` with the run's schema and error policy; part
// `part` of `num_parts` (disjoint byte ranges, see data/reader.hpp).
data::reader_options reader_options_for(const train_config& cfg,
                                        const std::vector<std::string>& files,
                                        std::size_t part = 0, std::size_t num_parts = 1);

std::unique_ptr<data::reader> open_reader(const train_config& cfg,
                                          const std::vector<std::string>& files,
                                          std::string* err);

// Logs the reader's first malformed lines and how many more were skipped,
// then the multi-hot bags cut to data.max-ids (stats::cut_bags_note).
void log_malformed(const data::reader& r, const char* what);

// The error for a data set that yielded no example: "the training set is
// empty: no valid example in 'a.tsv', 'b.tsv' (3 malformed lines skipped)".
// `what` is "training" or "eval". Metrics of an empty set would be NaN, so
// every engine refuses it.
std::string empty_set_error(const char* what, const std::vector<std::string>& files,
                            std::uint64_t malformed);

// Total size in bytes of the files the entries name (folders and patterns
// expanded; missing files count 0); 0 (unknown) when one is compressed or
// standard input.
std::uint64_t total_bytes(const std::vector<std::string>& files);

} // namespace runtime
