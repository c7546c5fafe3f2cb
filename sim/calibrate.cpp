#include "sim/calibrate.hpp"
#include "sim/calibrate_dense.hpp"
#include "sim/calibrate_roles.hpp"
#include "sim/calibrate_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <vector>

#include <unistd.h>

#include <caf/all.hpp>

#include "data/reader.hpp"
#include "messages/messages.hpp"
#include "data/synthetic.hpp"
#include "model/embedding.hpp"
#include "engine/input.hpp"
#include "model/dlrm.hpp"

namespace runtime {

namespace {

using calibrate_detail::median_of_five;
using calibrate_detail::since;
using calibrate_detail::wall;

// The synthetic batches, read by the reader as a trainer's reader does;
// parse_ns: its seconds per example (open, read, parse, hash), median of five.
std::optional<std::string> read_batches(const train_config& cfg, std::vector<data::batch>& out,
                                        double& parse_ns) {
  namespace fs = std::filesystem;
  const auto path =
    (fs::temp_directory_path() / ("ss-calibrate-" + std::to_string(::getpid()) + ".tsv")).string();
  data::synthetic_options so;
  so.rows = 8192;
  std::string err;
  data::generate_result gr;
  if (!data::generate_synthetic(so, path, &gr, &err))
    return "calibrate: " + err;
  auto read_all = [&](std::vector<data::batch>& into) {
    auto r = data::reader::open(reader_options_for(cfg, std::vector<std::string>{path}, 0, 1), &err);
    if (r)
      for (data::batch b; r->next(b, cfg.train.batch_size); b = data::batch{})
        into.push_back(std::move(b));
    return bool(r);
  };
  const bool ok = read_all(out);
  std::size_t examples = 0;
  for (const auto& b : out)
    examples += b.size;
  if (ok && examples > 0)
    parse_ns = 1e9 *
               median_of_five([&] {
                 std::vector<data::batch> again;
                 const auto t0 = wall::now();
                 read_all(again);
                 return since(t0);
               }) /
               double(examples);
  std::error_code ec;
  fs::remove(path, ec);
  fs::remove(path + ".meta.json", ec);
  if (!ok || out.empty())
    return "calibrate: cannot read the synthetic batches: " + err;
  return std::nullopt;
}

// gflops from the worker's dense work alone, less what the model charges
// for the dense step's memory traffic (16 bytes a parameter at
// memory_gbps); the rows' work is the shards' (lookup-row-ns, push-row-ns).
std::optional<std::string> measure_step(const train_config& base, calibration& out) {
  using namespace calibrate_detail;
  train_config cfg = base;
  cfg.checkpoint = checkpoint_settings{};
  std::vector<data::batch> batches;
  if (auto e = read_batches(cfg, batches, out.parse_example_ns))
    return e;
  const double flops = 3.0 * model::dlrm(cfg.arch).flops_per_example();
  std::uint64_t examples = 0;
  for (const auto& b : batches)
    examples += b.size;
  dense_work work(cfg, batches);
  work.passes(1); // warm-up: caches, allocations
  // Three passes a round (about 0.1 s): a single pass moved by 40 % from
  // round to round on a shared machine.
  const double dense = median_of_five([&] { return work.passes(3); }) / 3.0;
  const double step_bytes = 16.0 * double(work.replica_size()) * double(batches.size());
  const double traffic = step_bytes / (out.memory_gbps * 1e9);
  out.gflops = flops * double(examples) / std::max(dense - traffic, 0.5 * dense) / 1e9;
  const auto rows = measure_rows(cfg, batches);
  out.lookup_row_ns = rows.lookup_ns;
  out.push_row_ns = rows.push_ns;
  out.batch_id_ns = measure_batch_ids(cfg, batches);
  const auto mp = measure_mp(cfg, batches, rows.lookup_ns);
  out.mp_push_value_ns = mp.push_value_ns;
  out.mp_push_map_rows = mp.map_rows;
  out.mp_push_value_big_ns = mp.push_value_big_ns;
  out.mp_reply_value_ns = mp.reply_value_ns;
  const auto cpus = allowed_cpus();
  out.contention_threads = unsigned(cpus.size());
  out.core_contention =
    cpus.size() > 1 ? measure_contention(work, cpus, out.contention_lo, out.contention_hi) : 1.0;
  return std::nullopt;
}

double measure_memory() {
  const std::size_t n = std::size_t(64) << 20;
  std::vector<char> a(n, 1), b(n, 2);
  std::memcpy(b.data(), a.data(), n); // warm-up: pages in
  return median_of_five([&] {
    const auto t0 = wall::now();
    for (int i = 0; i < 4; ++i)
      std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), n);
    return 4.0 * 2.0 * double(n) / since(t0) / 1e9;
  });
}

caf::behavior ponger(caf::event_based_actor*, int) {
  return {[](std::uint64_t n) { return n; }};
}

caf::behavior pinger(caf::event_based_actor* self, caf::actor peer) {
  auto left = std::make_shared<std::uint64_t>(0);
  auto done = std::make_shared<caf::response_promise>();
  return {
    [=](messages::start_atom, std::uint64_t rounds) {
      *left = rounds;
      *done = self->make_response_promise();
      self->send(peer, *left);
      return *done;
    },
    [=](std::uint64_t) {
      if (--*left == 0)
        done->deliver(messages::done_atom::value);
      else
        self->send(peer, *left);
    },
  };
}

double measure_messages() {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system sys{cfg};
  auto pong = sys.spawn(ponger, 0);
  auto ping = sys.spawn(pinger, pong);
  caf::scoped_actor self{sys};
  const std::uint64_t rounds = 20000;
  auto round = [&] {
    const auto t0 = wall::now();
    self->request(ping, caf::infinite, messages::start_atom::value, rounds)
      .receive([](messages::done_atom) {}, [](caf::error&) {});
    return 1e6 * since(t0) / double(2 * rounds);
  };
  round(); // warm-up
  const double us = median_of_five(round);
  self->send_exit(ping, caf::exit_reason::user_shutdown);
  self->send_exit(pong, caf::exit_reason::user_shutdown);
  return us;
}

} // namespace

std::optional<std::string> calibrate(const train_config& cfg, calibration& out) {
  const auto t0 = wall::now();
  out.memory_gbps = measure_memory(); // (measure_step uses it)
  if (auto e = measure_step(cfg, out))
    return e;
  out.message_us = measure_messages();
  if (auto e = measure_remote(out.message_us, out.remote))
    return e;
  out.seconds = since(t0);
  return std::nullopt;
}

} // namespace runtime
