#include "tools/calibration_record.hpp"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>

#include "config/kept_calibration.hpp"
#include "deploy/calibrate_tls.hpp"
#include "report/output_files.hpp"

namespace tools {

namespace {

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace

runtime::calibration_record calibration_record_of(const runtime::calibration& c,
                                                  const runtime::train_config& cfg,
                                                  const std::string& command) {
  runtime::calibration_record r;
  r.cpu = runtime::cpu_model_name();
  r.isa = runtime::build_isa_level();
  r.cores = std::int64_t(std::thread::hardware_concurrency());
  r.date = utc_now();
  r.command = command;
  char note[1536];
  std::snprintf(note, sizeof note,
                "medians of 5 rounds on one core, model %s, batch %zu; core-contention where the "
                "handlers' job on %zu rows on the virtual clock runs as it did for real (%.0f examples/s, "
                "virtual %.0f), %u threads on one replica read %.4g (rounds %.4g-%.4g); gflops the "
                "GEMM probe's %.4g over %.3g, the rate the workers of a measured job stepped at; "
                "remote terms one message at a "
                "time on loopback, plain TCP and mutual TLS; message-us the cold ping-pong's "
                "%.3g us plus %.3g us a handler beyond the model's price in a measured job of "
                "%llu handlers; jitter their times' spread around the model's price "
                "(coefficient of variation %.3g); dct.mp prices the probes' times %.3g "
                "(worker) and %.3g (shard) as the same job under dct.mp spent them",
                cfg.arch_name.c_str(), std::size_t(cfg.train.batch_size), contention_job_rows,
                c.contention_real_eps,
                c.contention_virtual_eps, c.contention_threads, c.contention_probe,
                c.contention_lo, c.contention_hi, c.gflops_probe, c.dense_job_scale,
                c.message_cold_us, c.handler_job_gap_us,
                (unsigned long long)c.handler_job_handlers, c.handler_job_cost_cv, c.mp_worker_scale,
                c.mp_shard_scale);
  r.note = note;
  r.sim = {{"gflops", c.gflops},
           {"memory-gbps", c.memory_gbps},
           {"sync-gbps", c.sync_gbps},
           {"jitter", c.jitter},
           {"message-us", c.message_us},
           {"lookup-row-ns", c.lookup_row_ns},
           {"push-row-ns", c.push_row_ns},
           {"parse-example-ns", c.parse_example_ns},
           {"batch-id-ns", c.batch_id_ns},
           {"mp-push-value-ns", c.mp_push_value_ns},
           {"mp-reply-value-ns", c.mp_reply_value_ns},
           {"mp-decode-value-ns", c.mp_decode_value_ns},
           {"mp-push-map-rows", c.mp_push_map_rows},
           {"mp-push-value-big-ns", c.mp_push_value_big_ns},
           {"core-contention", c.core_contention},
           {"remote-message-us", c.remote.message_us},
           {"remote-gbps", c.remote.gbps},
           {"remote-tls-message-us", c.remote_tls.message_us},
           {"remote-tls-gbps", c.remote_tls.gbps},
           {"remote-streamed-message-us", c.remote.streamed_message_us},
           {"remote-tls-streamed-message-us", c.remote_tls.streamed_message_us}};
  return r;
}

std::optional<std::string> measure_calibration(const runtime::train_config& cfg,
                                               runtime::calibration& c) {
  if (auto e = runtime::calibrate(cfg, c))
    return e;
  if (auto e = runtime::measure_remote_tls(c.message_warm_us, c.remote_tls))
    return e;
  return measure_handler_cost(cfg, c);
}

std::optional<std::string> keep_machine_calibration(const runtime::option_set& o) {
  namespace fs = std::filesystem;
  if (o.get_string("sim.calibration") != runtime::this_machine_calibration ||
      !runtime::uses_virtual_clock(o))
    return std::nullopt;
  const auto path = runtime::kept_calibration_path();
  std::error_code ec;
  if (path.empty())
    return std::nullopt; // the reader says why there is no place for it
  if (fs::exists(path, ec)) { // kept: read as it is, never rewritten
    runtime::calibration_record kept;
    if (auto e = runtime::read_calibration(path, kept))
      return *e + " (this machine's kept calibration: remove the file to measure it anew, or "
                  "name another with --sim.calibration)";
    return std::nullopt;
  }
  // The calibration of the defaults (model small, automatic batch): one file
  // a machine, whatever model the first run trains.
  runtime::option_set defaults;
  runtime::add_train_options(defaults);
  runtime::train_config cfg;
  if (auto e = runtime::build_train_config(defaults, cfg))
    return "measuring this machine's calibration: " + *e;
  spdlog::info("sim.calibration = this-machine: no calibration of this machine ({}, {}, {} "
               "cores) is kept yet; measuring it once (15-60 s) for {}",
               runtime::cpu_model_name(), runtime::build_isa_level(),
               std::thread::hardware_concurrency(), path);
  runtime::calibration c;
  if (auto e = measure_calibration(cfg, c))
    return "measuring this machine's calibration for " + path + ": " + *e;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec)
    return "cannot make the folder of " + path + " for this machine's calibration: " +
           ec.message();
  std::string err;
  const auto record = calibration_record_of(c, cfg, "shadowsync train (sim.calibration = this-machine)");
  if (!runtime::write_replacing(path, runtime::calibration_json(record), &err))
    return "keeping this machine's calibration: " + err;
  spdlog::info("this machine's calibration is kept in {} (gflops {:.4g}, memory-gbps {:.4g}; "
               "measured in {:.1f} s); later runs read it, and removing it measures anew",
               path, c.gflops, c.memory_gbps, c.seconds);
  return std::nullopt;
}

} // namespace tools
