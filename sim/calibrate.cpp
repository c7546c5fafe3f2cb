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

// `rows` synthetic rows in batches, read by the reader as a trainer's
// reader does; parse_ns (when given): its seconds per example (open, read,
// parse, hash), median of five.
std::optional<std::string> read_batches(const train_config& cfg, std::size_t rows,
                                        std::vector<data::batch>& out, double* parse_ns) {
  namespace fs = std::filesystem;
  const auto path =
    (fs::temp_directory_path() / ("ss-calibrate-" + std::to_string(::getpid()) + ".tsv")).string();
  data::synthetic_options so;
  so.rows = rows;
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
  if (ok && examples > 0 && parse_ns)
    *parse_ns = 1e9 *
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

// sync-gbps: bytes read + written per second by memcpy of the replica's
// parameters (`params` floats), back and forth: the size a syncer's
// snapshot, merge and elastic update move, which the caches hold.
double measure_sync(std::size_t params) {
  const std::size_t n = std::max<std::size_t>(params, 1024) * sizeof(float);
  std::vector<char> a(n, 1), b(n, 2);
  const std::size_t reps = std::max<std::size_t>(2, (std::size_t(128) << 20) / n);
  std::memcpy(b.data(), a.data(), n);
  return median_of_five([&] {
    const auto t0 = wall::now();
    for (std::size_t i = 0; i < reps; ++i)
      std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), n);
    return 2.0 * double(n) * double(reps) / since(t0) / 1e9;
  });
}

// gflops from the worker's dense work alone, less what the model charges
// for the dense step's memory traffic (16 bytes a parameter at
// memory_gbps); the rows' work is the shards' (lookup-row-ns, push-row-ns).
std::optional<std::string> measure_step(const train_config& base, calibration& out) {
  using namespace calibrate_detail;
  train_config cfg = base;
  cfg.checkpoint = checkpoint_settings{};
  std::vector<data::batch> batches;
  if (auto e = read_batches(cfg, 8192, batches, &out.parse_example_ns))
    return e;
  // A worker's share of a longer run, for the dct.mp push's map (half of
  // the validation suite's 100 000 rows over two trainers, and more).
  std::vector<data::batch> stream;
  if (auto e = read_batches(cfg, 65536, stream, nullptr))
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
  out.sync_gbps = measure_sync(work.replica_size());
  const double step_bytes = 16.0 * double(work.replica_size()) * double(batches.size());
  const double traffic = step_bytes / (out.memory_gbps * 1e9);
  out.gflops = flops * double(examples) / std::max(dense - traffic, 0.5 * dense) / 1e9;
  const auto rows = measure_rows(cfg, batches);
  out.lookup_row_ns = rows.lookup_ns;
  out.push_row_ns = rows.push_ns;
  out.batch_id_ns = measure_batch_ids(cfg, batches);
  const auto mp = measure_mp(cfg, batches, stream, rows.lookup_ns);
  stream = {};
  out.mp_push_value_ns = mp.push_value_ns;
  out.mp_push_map_rows = mp.map_rows;
  out.mp_push_value_big_ns = mp.push_value_big_ns;
  out.mp_stream_map_rows = mp.stream_map_rows;
  out.mp_stream_value_ns = mp.stream_value_ns;
  out.mp_reply_value_ns = mp.reply_value_ns;
  out.mp_decode_value_ns = mp.decode_value_ns;
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

// One line of every 64 bytes of `buf` read and written: the caches a
// handler finds after a worker's batch has run (buf is the L2's size).
void evict(std::vector<std::uint64_t>& buf) {
  for (std::size_t i = 0; i < buf.size(); i += 8)
    buf[i] += 1;
}

// The cold ping-pong's shared state: the sweep buffer, when the last
// handler's own work ended, and the gaps from there to the next handler's
// start (the message's send, the scheduler's turn, the dispatch).
struct cold_probe {
  std::vector<std::uint64_t> buf;
  wall::time_point last_end{};
  double gaps = 0;
  std::uint64_t messages = 0;
  void start() {
    gaps += since(last_end);
    ++messages;
  }
  void work() {
    evict(buf);
    last_end = wall::now();
  }
};

caf::behavior cold_ponger(caf::event_based_actor*, cold_probe* p) {
  return {[=](std::uint64_t n) {
    p->start();
    p->work();
    return n;
  }};
}

caf::behavior cold_pinger(caf::event_based_actor* self, caf::actor peer, cold_probe* p) {
  auto left = std::make_shared<std::uint64_t>(0);
  auto done = std::make_shared<caf::response_promise>();
  return {
    [=](messages::start_atom, std::uint64_t rounds) {
      *left = rounds;
      *done = self->make_response_promise();
      p->work();
      self->send(peer, *left);
      return *done;
    },
    [=](std::uint64_t) {
      p->start();
      p->work();
      if (--*left == 0)
        done->deliver(messages::done_atom::value);
      else
        self->send(peer, *left);
    },
  };
}

// The same ping-pong where each handler sweeps a buffer the size of this
// core's L2 (a worker's batch leaves the caches so): the time from one
// handler's end of work to the next handler's start, a message's fixed
// cost where handlers run between batches (sim.message-us); median of
// nine rounds.
double measure_cold_messages() {
  long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0)
    l2 = 2l << 20;
  cold_probe probe;
  probe.buf.assign(std::size_t(l2) / sizeof(std::uint64_t), 1);
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system sys{cfg};
  auto pong = sys.spawn(cold_ponger, &probe);
  auto ping = sys.spawn(cold_pinger, pong, &probe);
  caf::scoped_actor self{sys};
  auto round = [&] {
    probe.gaps = 0;
    probe.messages = 0;
    self->request(ping, caf::infinite, messages::start_atom::value, std::uint64_t(1000))
      .receive([](messages::done_atom) {}, [](caf::error&) {});
    return 1e6 * probe.gaps / double(std::max<std::uint64_t>(probe.messages, 1));
  };
  round(); // warm-up
  std::vector<double> us;
  for (int i = 0; i < 9; ++i)
    us.push_back(round());
  std::sort(us.begin(), us.end());
  self->send_exit(ping, caf::exit_reason::user_shutdown);
  self->send_exit(pong, caf::exit_reason::user_shutdown);
  return us[4];
}

} // namespace

std::optional<std::string> calibrate(const train_config& cfg, calibration& out) {
  const auto t0 = wall::now();
  out.memory_gbps = measure_memory(); // (measure_step uses it)
  if (auto e = measure_step(cfg, out))
    return e;
  out.message_warm_us = measure_messages();
  out.message_cold_us = out.message_us = measure_cold_messages();
  if (auto e = measure_remote(out.message_warm_us, out.remote))
    return e;
  out.seconds = since(t0);
  return std::nullopt;
}

} // namespace runtime
