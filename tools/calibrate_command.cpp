// `shadowsync calibrate`: measures the virtual clock's cost constants on one
// core of this machine (sim/calibrate.hpp) and prints them as INI lines
// for --config-file; with --out=FILE it also writes them as a calibration
// file for sim.calibration (config/calibration_file.hpp), saying what
// machine they model. Takes the train options (the model, the batch size).
#include <cstdio>

#include <spdlog/spdlog.h>

#include "model/dlrm.hpp"
#include "sim/calibrate.hpp"
#include "config/calibration_file.hpp"
#include "report/output_files.hpp"
#include "report/logging.hpp"
#include "config/options.hpp"
#include "config/train_config.hpp"
#include "tools/calibration_record.hpp"
#include "tools/commands.hpp"

namespace tools {

int calibrate_command(const std::vector<std::string>& raw_args) {
  std::string out_path, command = "shadowsync calibrate";
  std::vector<std::string> args;
  for (const auto& a : raw_args) {
    command += " " + a;
    if (a.rfind("--out=", 0) == 0)
      out_path = a.substr(6);
    else
      args.push_back(a);
  }
  runtime::option_set opts;
  runtime::add_train_options(opts);
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::printf("usage: shadowsync calibrate [--config-file=FILE.ini] [--model.arch=NAME] "
                  "[--train.batch-size=N] [--out=FILE.json]\n\nMeasures sim.gflops, sim.memory-gbps, "
                  "sim.sync-gbps, sim.message-us, sim.lookup-row-ns, sim.push-row-ns, sim.parse-example-ns, sim.batch-id-ns, sim.mp-push-value-ns, sim.mp-reply-value-ns and sim.mp-decode-value-ns on one core of this "
                  "machine, sim.core-contention on all of its cores, and sim.remote-message-us "
                  "and sim.remote-gbps between two actor systems on loopback, over plain TCP and "
                  "again over mutual TLS (sim.remote-tls-message-us, sim.remote-tls-gbps; a "
                  "certificate made for it in a temporary folder), then runs a short job of the roles: its workers' dense steps set sim.gflops, what it spends a handler beyond the model's price adds to sim.message-us, and sim.core-contention is fitted so that the job on the virtual clock runs as fast as on this machine's cores (about 15-60 s), "
                  "and prints them as INI lines; --out=FILE.json also writes them as a calibration "
                  "file for --sim.calibration=FILE.json, with this machine's CPU, "
                  "instruction-set level, cores, the date and the command.\n");
      return exit_ok;
    }
  if (auto e = opts.parse(args)) {
    std::fprintf(stderr, "shadowsync calibrate: %s\n", e->c_str());
    return exit_usage;
  }
  runtime::train_config cfg;
  if (auto e = runtime::build_train_config(opts, cfg)) {
    std::fprintf(stderr, "shadowsync calibrate: %s\n", e->c_str());
    return exit_usage;
  }
  const bool out_given = args.size() != raw_args.size();
  if (out_given && out_path.empty()) {
    std::fprintf(stderr, "shadowsync calibrate: --out needs a path: --out=FILE.json\n");
    return exit_usage;
  }
  if (!out_path.empty())
    if (auto e = runtime::check_output_file("--out", out_path, runtime::input_files{})) {
      std::fprintf(stderr, "shadowsync calibrate: %s\n", e->c_str());
      return exit_usage;
    }
  runtime::setup_logging(cfg.output.log_level);
  spdlog::info("calibrating the virtual clock's cost model on one core (model {}, batch {})",
               cfg.arch_name, cfg.train.batch_size);
  runtime::calibration c;
  if (auto e = measure_calibration(cfg, c)) {
    spdlog::error("{}", *e);
    return exit_failure;
  }
  std::printf("# shadowsync calibrate: medians of 5 rounds on one core, model %s, batch %zu, "
              "%.1f s; the dense probe's core-contention with %u threads on one replica\n[sim]\n# gflops: the GEMM probe's %.4g over %.3g, the rate the job's workers stepped at\ngflops = %.4g\n"
              "memory-gbps = %.4g\nsync-gbps = %.4g\n# message-us: a handler's fixed cost where the roles run (a job of %llu handlers, %.3g us each beyond\n# the model's price at the cold ping-pong's %.4g us; warm caches: %.4g us)\nmessage-us = %.4g\nlookup-row-ns = %.4g\n"
              "push-row-ns = %.4g\nparse-example-ns = %.4g\nbatch-id-ns = %.4g\n# dct.mp: the one-core probes' prices times %.3g (the worker's) and %.3g (the shard's), as a measured job under dct.mp spent them\nmp-push-value-ns = %.4g\nmp-push-map-rows = %.0f\n# the probe's mp push at a run's map of %.0f rows: %.4g ns a value (before the factor)\nmp-push-value-big-ns = %.4g\nmp-reply-value-ns = %.4g\nmp-decode-value-ns = %.4g\n# core-contention: where the job of %zu rows on the virtual clock runs as it did for real (%.0f examples/s, virtual %.0f); the dense probe %.4g (rounds %.4g-%.4g)\ncore-contention = %.4g\n"
              "# jitter: the job's handler times around their price (coefficient of variation %.3g)\n"
              "jitter = %.4g\n"
              "# between two nodes on loopback, one message at a time (16 in flight: "
              "%.4g GB/s)\nremote-message-us = %.4g\nremote-gbps = %.4g\n"
              "remote-streamed-message-us = %.4g\n"
              "# the same over mutual TLS (16 in flight: %.4g GB/s)\n"
              "remote-tls-message-us = %.4g\nremote-tls-gbps = %.4g\n"
              "remote-tls-streamed-message-us = %.4g\n",
              cfg.arch_name.c_str(), std::size_t(cfg.train.batch_size), c.seconds,
              c.contention_threads, c.gflops_probe, c.dense_job_scale, c.gflops, c.memory_gbps, c.sync_gbps, (unsigned long long)c.handler_job_handlers, c.handler_job_gap_us, c.message_cold_us, c.message_warm_us, c.message_us, c.lookup_row_ns,
              c.push_row_ns, c.parse_example_ns, c.batch_id_ns, c.mp_worker_scale, c.mp_shard_scale, c.mp_push_value_ns, c.mp_push_map_rows, c.mp_stream_map_rows, c.mp_stream_value_ns, c.mp_push_value_big_ns, c.mp_reply_value_ns, c.mp_decode_value_ns, contention_job_rows, c.contention_real_eps, c.contention_virtual_eps, c.contention_probe, c.contention_lo, c.contention_hi, c.core_contention,
              c.handler_job_cost_cv, c.jitter,
              c.remote.streamed_gbps, c.remote.message_us, c.remote.gbps,
              c.remote.streamed_message_us, c.remote_tls.streamed_gbps,
              c.remote_tls.message_us, c.remote_tls.gbps, c.remote_tls.streamed_message_us);
  if (!out_path.empty()) {
    const auto r = calibration_record_of(c, cfg, command);
    std::string err;
    if (!runtime::write_replacing(out_path, runtime::calibration_json(r), &err)) {
      spdlog::error("{}", err);
      return exit_failure;
    }
    spdlog::info("calibration written to {} (read it with --sim.calibration={})", out_path,
                 out_path);
  }
  return exit_ok;
}

} // namespace tools
