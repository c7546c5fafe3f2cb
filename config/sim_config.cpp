#include "config/sim_config.hpp"

#include "config/calibration_file.hpp"
#include "config/kept_calibration.hpp"
#include "config/option_values.hpp"

namespace runtime {

void add_sim_options(option_set& o) {
  using t = opt_type;
  o.add({"sim.clock", t::string, "virtual",
         "simulated cluster: virtual (a deterministic discrete-event simulation: one thread, "
         "virtual time, every host charged for its work; see docs/virtual-time.md) or wall "
         "(the actors on the scheduler's threads, wall-clock time: real Hogwild "
         "concurrency); sequential and multi-node runs are on the wall clock",
         {"wall", "virtual"}});
  o.add({"sim.cores-per-host", t::integer, "0",
         "virtual clock: cores of each simulated host (0 = cluster.workers + 1: every worker "
         "and the syncer of a trainer at once)",
         {}, 0.0, 4096.0});
  o.add({"sim.placement", t::string, "per-role",
         "simulated cluster: per-role (each trainer, embedding shard and dense shard on a host "
         "of its own) or one-host (every role on host 0, as on one real machine: they share "
         "its sim.cores-per-host cores and send nothing over the network model; faults.freeze "
         "and faults.slow-nic then act on that one host)",
         {"per-role", "one-host"}});
  o.add({"sim.cost", t::string, "model",
         "virtual clock: a handler's cost from counted work (model, repeatable) or its "
         "thread CPU time (measured)",
         {"model", "measured"}});
  o.add({"sim.send-at", t::string, "end",
         "virtual clock: a message a handler sends on its own host leaves at the handler's "
         "end (end) or once the work the handler counted before the send is done (work: "
         "another core may take the receiver while the sender still runs, as on real "
         "threads); messages to another host leave at the end either way",
         {"end", "work"}});
  o.add({"sim.gflops", t::real, "44", "cost model: effective GFLOP/s of one core training the model (a batch charges 3 x its "
         "forward FLOPs); defaults measured here by shadowsync calibrate", {}, 1e-6,
         1e9});
  o.add({"sim.memory-gbps", t::real, "7.5", "cost model: memory traffic of one core, GB/s (read + write)", {},
         1e-6, 1e9});
  o.add({"sim.message-us", t::real, "1", "cost model: fixed cost of each handler, microseconds",
         {}, 0.0, 1e9});
  o.add({"sim.lookup-row-ns", t::real, "0",
         "cost model: an embedding shard's time per row it gathers for a lookup, ns (0 = the "
         "row's bytes at sim.memory-gbps); shadowsync calibrate measures it",
         {}, 0.0, 1e9});
  o.add({"sim.push-row-ns", t::real, "0",
         "cost model: an embedding shard's time per row it updates for a push (weights and "
         "optimiser state), ns (0 = the row's bytes at sim.memory-gbps); shadowsync calibrate "
         "measures it",
         {}, 0.0, 1e9});
  // Cost constants measured since the first calibration files: 0 (the
  // default) keeps the model's older charge, and is left out of saved
  // configurations so their bytes stay; a calibration file may omit them.
  auto add_measured = [&](const char* key, const char* help) {
    option_spec spec{key, t::real, "0", help, {}, 0.0, 1e9};
    spec.omit_default_from_ini = true;
    o.add(spec);
  };
  add_measured("sim.parse-example-ns",
               "cost model: a reader's time per example it reads and parses (the line, "
               "hashing its ids into a batch), ns (0 = about 2 KB of memory traffic an "
               "example at sim.memory-gbps); shadowsync calibrate measures it");
  add_measured("sim.batch-id-ns",
               "cost model: a worker's own time per id of a batch besides its dense work "
               "(the keys, their de-duplication and split over the shards, the replies' rows "
               "into its input, the pushes' gradients), ns (0 = not charged); shadowsync "
               "calibrate measures it");
  add_measured("sim.mp-push-value-ns",
               "cost model, dct.mp: a worker's time per gradient value it thresholds for "
               "a push (the rows' residuals added and kept, the threshold, the encoding), "
               "ns (0 = 12 bytes a value at sim.memory-gbps); shadowsync calibrate "
               "measures it");
  add_measured("sim.mp-push-map-rows",
               "cost model, dct.mp: the rows of the residual map sim.mp-push-value-ns was "
               "measured at (0 = every push costs sim.mp-push-value-ns); shadowsync calibrate "
               "measures it");
  add_measured("sim.mp-push-value-big-ns",
               "cost model, dct.mp: sim.mp-push-value-ns with the worker's residual map at "
               "524 288 rows (a long run's: the map holds every row the worker has pushed); "
               "between sim.mp-push-map-rows and 524 288 rows a push costs the log-linear "
               "blend of the two (0 = sim.mp-push-value-ns at any size); shadowsync calibrate "
               "measures it");
  add_measured("sim.mp-reply-value-ns",
               "cost model, dct.mp: an embedding shard's time per value of a thresholded "
               "lookup reply beyond the rows' lookup (the threshold, its estimates, the "
               "encoding), ns (0 = 8 bytes a value at sim.memory-gbps); shadowsync "
               "calibrate measures it");
  add_measured("sim.sync-gbps",
               "cost model: the memory traffic of the dense sync's work (a syncer's "
               "snapshot and merge, the elastic updates, ring chunks, DCT deltas: vectors of "
               "the replica's size, which the caches hold), GB/s read + written (0 = "
               "sim.memory-gbps); shadowsync calibrate measures it with copies of the "
               "replica's size");
  add_measured("sim.mp-decode-value-ns",
               "cost model, dct.mp: the time per value of a thresholded message's dense size "
               "to decode it and scatter its entries (a worker's of a reply, a shard's of a "
               "push), ns (0 = 4 bytes a value at sim.memory-gbps); shadowsync calibrate "
               "measures it");
  o.add({"sim.core-contention", t::real, "1",
         "virtual clock: how much slower a handler's work runs while its host's other cores "
         "are busy: x (1 + (this - 1) x busy others / (cores - 1)), fixed at the handler's "
         "start, under both sim.cost modes (1 = not at all); shadowsync calibrate measures it "
         "with Hogwild steps on one replica on this machine's cores",
         {}, 1.0, 100.0});
  option_spec calibration{
    "sim.calibration", t::string, "",
    "virtual clock, cost model: the constants sim.gflops ... sim.remote-gbps from a "
    "calibration file (shadowsync calibrate --out=FILE) or a shipped preset's name "
    "(config/calibrations/NAME.json), or this-machine: this machine's own, measured by "
    "the first virtual-clock run and kept ($SHADOWSYNC_STATE_DIR, else "
    "$XDG_STATE_HOME/shadowsync, else ~/.local/state/shadowsync: calibrations/CPU-LEVEL-NCORE.json; "
    "config/default.ini asks for it); a sim.* constant given in the INI file or on the "
    "command line wins over the file; empty = the built-in defaults (docs/virtual-time.md)"};
  calibration.omit_default_from_ini = true; // the saved configurations' bytes stay
  o.add(calibration);
  o.add({"sim.machine-cores", t::integer, "0",
         "virtual clock: every simulated host runs on one machine of this many cores, as "
         "processes of one machine do (a handler needs a free core of its host, i.e. a "
         "scheduler thread, and a free core of the machine); 0 = each host is a machine of "
         "its own",
         {}, 0.0, 4096.0});
  o.add({"sim.remote-message-us", t::real, "0",
         "cost model: core time on each side of a message between two hosts (serialisation "
         "and the socket, as between nodes), microseconds per message; shadowsync calibrate "
         "measures it on loopback (0 = none)",
         {}, 0.0, 1e9});
  o.add({"sim.remote-gbps", t::real, "0",
         "cost model: the rate, GB/s, at which each side of a message between two hosts "
         "serialises and moves its bytes through the socket (core time, besides the network "
         "model's wire time); shadowsync calibrate measures it on loopback (0 = free)",
         {}, 0.0, 1e9});
  option_spec tls{"sim.remote-tls", t::boolean, "false",
                  "virtual clock: messages between hosts go over mutual TLS, as a multi-node "
                  "run's nodes talk unless deploy.insecure: each side is charged "
                  "sim.remote-tls-message-us and sim.remote-tls-gbps instead of "
                  "sim.remote-message-us and sim.remote-gbps"};
  tls.omit_default_from_ini = true;
  o.add(tls);
  add_measured("sim.remote-tls-message-us",
               "cost model, sim.remote-tls: core time on each side of a message between two "
               "hosts over mutual TLS (serialisation, encryption, the socket), microseconds "
               "per message; shadowsync calibrate measures it on loopback (0 = none)");
  add_measured("sim.remote-tls-gbps",
               "cost model, sim.remote-tls: the rate, GB/s, at which each side of a message "
               "between two hosts over mutual TLS serialises, encrypts or decrypts and moves "
               "its bytes; shadowsync calibrate measures it on loopback (0 = free)");
  add_measured("sim.remote-streamed-message-us",
               "cost model: sim.remote-message-us for a side whose I/O thread is still busy "
               "with the message before (several in flight: no wake-up, no idle polling), "
               "microseconds per message; shadowsync calibrate measures it with 16 in flight "
               "(0 = sim.remote-message-us always)");
  add_measured("sim.remote-tls-streamed-message-us",
               "cost model, sim.remote-tls: the same over mutual TLS "
               "(0 = sim.remote-tls-message-us always)");
  o.add({"sim.jitter", t::real, "0",
         "virtual clock: each handler's cost varies by up to this fraction either way, drawn "
         "from model.seed (repeatable), so that overlapping workers drift apart as on real "
         "cores (0 = none; calibrate measures it)",
         {}, 0.0, 0.9});
  o.add({"faults.kill", t::string_list, "[]",
         "simulated cluster: kill roles during training, [ROLE@WHEN, ...]; ROLE trainer-N, "
         "embedding-shard-N or dense-shard-N; WHEN a fraction of the examples (0.5) or a time "
         "since training started (12.5s, virtual under sim.clock=virtual). A killed trainer "
         "leaves the job (the ring re-forms), a killed shard ends it unless recovery.mode=partial restarts it"});
  o.add({"faults.freeze", t::string_list, "[]",
         "simulated cluster: make a role's host unresponsive for a while, "
         "[ROLE@WHEN+DURATION, ...] such as trainer-1@0.5+2s: it runs nothing and its "
         "messages wait until the freeze ends (ROLE and WHEN as for faults.kill)"});
  o.add({"faults.slow-nic", t::string_list, "[]",
         "simulated cluster with net.enabled: slow a role's host's NIC for a while, "
         "[ROLE@WHEN+DURATION*FACTOR, ...] such as dense-shard-0@1s+5s*0.1: FACTOR x its "
         "bandwidth in both directions (ROLE and WHEN as for faults.kill)"});
}

std::optional<std::string> build_sim_settings(const option_set& o, cluster_mode mode,
                                              sim_settings& out) {
  // The simulated cluster's clock. The other modes run on the wall clock
  // whatever it says: a configuration written by output.config lists
  // sim.clock=virtual (the default) for every mode.
  out.virtual_clock = mode == cluster_mode::simulated && o.get_string("sim.clock") == "virtual";
  out.one_host = o.get_string("sim.placement") == "one-host";
  if (out.one_host && mode != cluster_mode::simulated)
    return "option 'sim.placement' = one-host (" + o.source("sim.placement") +
           ") applies only with cluster.mode=simulated (cluster.mode = " + to_string(mode) + ")";
  out.engine.cores_per_host = std::size_t(o.get_int("sim.cores-per-host"));
  out.engine.measured = o.get_string("sim.cost") == "measured";
  out.engine.send_at_work = o.get_string("sim.send-at") == "work";
  out.engine.gflops = o.get_real("sim.gflops");
  out.engine.memory_gbps = o.get_real("sim.memory-gbps");
  out.engine.sync_gbps = o.get_real("sim.sync-gbps");
  out.engine.message_us = o.get_real("sim.message-us");
  out.engine.lookup_row_ns = o.get_real("sim.lookup-row-ns");
  out.engine.push_row_ns = o.get_real("sim.push-row-ns");
  out.engine.parse_example_ns = o.get_real("sim.parse-example-ns");
  out.engine.batch_id_ns = o.get_real("sim.batch-id-ns");
  out.engine.mp_push_value_ns = o.get_real("sim.mp-push-value-ns");
  out.engine.mp_reply_value_ns = o.get_real("sim.mp-reply-value-ns");
  out.engine.mp_decode_value_ns = o.get_real("sim.mp-decode-value-ns");
  out.engine.mp_push_map_rows = o.get_real("sim.mp-push-map-rows");
  out.engine.mp_push_value_big_ns = o.get_real("sim.mp-push-value-big-ns");
  out.engine.core_contention = o.get_real("sim.core-contention");
  out.engine.machine_cores = std::size_t(o.get_int("sim.machine-cores"));
  out.engine.remote_message_us = o.get_real("sim.remote-message-us");
  out.engine.remote_gbps = o.get_real("sim.remote-gbps");
  out.engine.remote_tls = o.get_bool("sim.remote-tls");
  out.engine.remote_tls_message_us = o.get_real("sim.remote-tls-message-us");
  out.engine.remote_tls_gbps = o.get_real("sim.remote-tls-gbps");
  out.engine.remote_streamed_message_us = o.get_real("sim.remote-streamed-message-us");
  out.engine.remote_tls_streamed_message_us = o.get_real("sim.remote-tls-streamed-message-us");
  out.engine.jitter = o.get_real("sim.jitter");
  // sim.calibration: the file's constants where the option is not set (a
  // caller that ran apply_calibration has them set from the file already).
  const auto calibration = effective_calibration(o);
  out.calibrated = !calibration.empty();
  // A saved configuration (a model, a checkpoint) carries every constant:
  // with this-machine it loads on a machine that keeps no calibration, or
  // another one, with the constants of the machine it was trained on.
  bool all_set = true;
  for (const auto& k : calibration_keys())
    all_set = all_set && o.is_set("sim." + k);
  if (out.calibrated && !(calibration == this_machine_calibration && all_set)) {
    std::string path;
    if (auto e = resolve_calibration(calibration, path))
      return e;
    calibration_record r;
    if (auto e = read_calibration(path, r))
      return e;
    const std::pair<const char*, double*> fields[] = {
      {"gflops", &out.engine.gflops},
      {"memory-gbps", &out.engine.memory_gbps},
      {"sync-gbps", &out.engine.sync_gbps},
      {"jitter", &out.engine.jitter},
      {"message-us", &out.engine.message_us},
      {"lookup-row-ns", &out.engine.lookup_row_ns},
      {"push-row-ns", &out.engine.push_row_ns},
      {"parse-example-ns", &out.engine.parse_example_ns},
      {"batch-id-ns", &out.engine.batch_id_ns},
      {"mp-push-value-ns", &out.engine.mp_push_value_ns},
      {"mp-reply-value-ns", &out.engine.mp_reply_value_ns},
      {"mp-decode-value-ns", &out.engine.mp_decode_value_ns},
      {"mp-push-map-rows", &out.engine.mp_push_map_rows},
      {"mp-push-value-big-ns", &out.engine.mp_push_value_big_ns},
      {"core-contention", &out.engine.core_contention},
      {"remote-message-us", &out.engine.remote_message_us},
      {"remote-gbps", &out.engine.remote_gbps},
      {"remote-tls-message-us", &out.engine.remote_tls_message_us},
      {"remote-tls-gbps", &out.engine.remote_tls_gbps},
      {"remote-streamed-message-us", &out.engine.remote_streamed_message_us},
      {"remote-tls-streamed-message-us", &out.engine.remote_tls_streamed_message_us}};
    option_set check; // the file's values against the options' ranges
    add_sim_options(check);
    for (const auto& [key, field] : fields)
      if (!o.is_set(std::string("sim.") + key)) {
        if (auto e = check.set_if_unset(std::string("sim.") + key,
                                        detail::format_real(r.sim.at(key)),
                                        "calibration file '" + path + "'"))
          return e;
        *field = r.sim.at(key);
      }
  }
  // TLS links priced at 0 while plain ones cost something: the constants
  // came from a calibration made before TLS was measured.
  if (out.engine.remote_tls && out.engine.remote_message_us > 0 &&
      out.engine.remote_tls_message_us == 0)
    return "option 'sim.remote-tls' = true (" + o.source("sim.remote-tls") +
           ") prices messages between hosts with sim.remote-tls-message-us, which is 0 while "
           "sim.remote-message-us is " + detail::format_real(out.engine.remote_message_us) +
           (calibration.empty() ? std::string()
                                : " (sim.calibration = " + calibration + ")") +
           ": the calibration has no TLS terms (measure one with shadowsync calibrate "
           "--out=FILE; a kept this-machine calibration is measured anew once removed; or set "
           "sim.remote-tls-message-us)";
  out.constants = constants_source(o);
  out.faults.clear();
  for (const char* key : {"faults.kill", "faults.freeze", "faults.slow-nic"}) {
    const auto before = out.faults.size();
    if (auto e = parse_faults(key, o.get_list(key), out.faults))
      return e;
    if (out.faults.size() > before && mode != cluster_mode::simulated)
      return std::string("option '") + key + "' (" + o.source(key) +
             ") applies only with cluster.mode=simulated (cluster.mode = " + to_string(mode) + ")";
  }
  return std::nullopt;
}

} // namespace runtime
