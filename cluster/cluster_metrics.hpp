#pragma once
// Turns the trainers' final reports into the run's metrics: examples, train
// NE, sync rounds, the sync-gap distribution, the blocked fraction and bytes
// per link type. Pure: unit-testable without actors.
#include <optional>
#include <vector>

#include "messages/messages.hpp"
#include "report/progress.hpp"
#include "report/run_metrics.hpp"

namespace runtime {

// `seconds` is the wall time of the training phase (start to last trainer done).
void aggregate_reports(const std::vector<messages::trainer_report>& reports, double seconds,
                       run_metrics& out);

// dct.mp: its traffic from the workers' counters (dim floats per row) and
// the run's totals in `run` (aggregate_reports' examples and link bytes), or
// nothing when no worker looked up through DCT. The settings are the caller's.
// key_words: 8-byte words naming a row in a push (2 for dynamic tables).
std::optional<dct_mp_metrics> dct_mp_from(const std::vector<messages::trainer_report>& reports,
                                          std::size_t dim, const run_metrics& run,
                                          std::size_t key_words = 1);

// Batches between consecutive completed rounds of one trainer; the first gap
// counts from 0 batches.
std::vector<double> sync_gaps(const messages::sync_stats& s);

// Throughput by per-host virtual time (run_metrics::host_examples_per_second):
// per trainer, its workers' mean of cpu + (lookup wait + blocked) / dilation,
// and examples over that; summed over trainers.
double host_examples_per_second(const std::vector<messages::trainer_report>& reports,
                                std::size_t workers_per_trainer, double dilation);

// Live progress: the sum of the trainers' progress reports (bytes by shard
// element-wise, each report's per-trainer entries kept), and the progress
// line's, timeline's and /metrics' sample for it (train NE, sync gap, rounds,
// blocked fraction = blocked / worker seconds, bytes = lookup + push + sync
// bytes, trainers ordered by index).
void add_progress(messages::progress_report& total, const messages::progress_report& p);
progress_sample progress_of(const messages::progress_report& total);

// Element-wise mean of the replicas (all of equal size).
std::vector<float> average_replicas(const std::vector<messages::trainer_report>& reports);

} // namespace runtime
