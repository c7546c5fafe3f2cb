// How fast do this machine's two cores hand cache lines to each other?
//
// Two threads, pinned to CPUs A and B (default 0 and 1):
//   ping-pong: they take turns incrementing one counter on its own cache
//     line; the time per hand-over is one line moving from one core to the
//     other (a one-way transfer, with the write that follows it).
//   handover: thread A writes a buffer of --bytes (default 1 MiB: about a
//     `small` replica with its Adagrad state), then thread B reads and
//     rewrites all of it, then A again: the time per 64-byte line handed
//     over, against the same passes done by one thread alone (the lines stay
//     in its own cache).
// Prints one line of key=value pairs per run (medians of --blocks blocks),
// so bench/hogwild_contention.py can log it beside each Hogwild run: a
// Hogwild run's dense step hands its replica's lines from core to core
// every batch, and what that costs is what this measures. Under a
// hypervisor it depends on where the host placed the two vCPUs.
//
// usage: bench_core_to_core [--cpus=A,B] [--bytes=N] [--blocks=N]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
  int cpu_a = 0, cpu_b = 1;
  std::size_t bytes = std::size_t{1} << 20;
  int blocks = 9;
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--cpus=", 0) == 0) {
      if (std::sscanf(a.c_str() + 7, "%d,%d", &o.cpu_a, &o.cpu_b) != 2)
        return false;
    } else if (a.rfind("--bytes=", 0) == 0) {
      o.bytes = std::strtoull(a.c_str() + 8, nullptr, 10);
    } else if (a.rfind("--blocks=", 0) == 0) {
      o.blocks = std::atoi(a.c_str() + 9);
    } else {
      return false;
    }
  }
  return o.bytes >= 64 && o.blocks > 0;
}

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct alignas(64) line {
  std::atomic<std::uint64_t> value{0};
};

// The two pinned threads take `turns` turns each per block, A first, each
// turn running `work` then handing the turn over through one shared line.
// Returns the ns per turn of each block (timed on A, over both threads'
// turns).
template <class Work>
std::vector<double> take_turns(const options& o, int turns, Work work) {
  line turn;
  auto play = [&](int blk, int r, std::uint64_t parity) {
    const std::uint64_t mine = (std::uint64_t(blk) * turns + r) * 2 + parity;
    while (turn.value.load(std::memory_order_acquire) != mine) {
    }
    work();
    turn.value.store(mine + 1, std::memory_order_release);
  };
  std::thread b([&] {
    pin(o.cpu_b);
    for (int blk = 0; blk < o.blocks; ++blk)
      for (int r = 0; r < turns; ++r)
        play(blk, r, 1);
  });
  pin(o.cpu_a);
  std::vector<double> out;
  for (int blk = 0; blk < o.blocks; ++blk) {
    const auto t0 = clock_type::now();
    for (int r = 0; r < turns; ++r)
      play(blk, r, 0);
    // (the block's last turn of B is awaited by the next block's first)
    const double ns = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
    out.push_back(ns / (2.0 * turns));
  }
  b.join();
  return out;
}

// ns per one-way hand-over of one line: turns doing nothing else.
std::vector<double> ping_pong(const options& o, int rounds) {
  return take_turns(o, rounds, [] {});
}

// One pass over the buffer: read every float, write it back changed (as a
// dense optimiser step reads and writes its parameters).
void pass(float* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    p[i] = p[i] * 0.999f + 1e-3f;
}

// ns per 64-byte line: passes taking turns between the two cores, and the
// same number of passes on one core.
void handover(const options& o, int passes, std::vector<double>& two, std::vector<double>& one) {
  const std::size_t n = o.bytes / sizeof(float);
  const double lines = double(o.bytes) / 64.0;
  std::vector<float> buf(n, 1.0f);
  for (double ns : take_turns(o, passes, [&] { pass(buf.data(), n); }))
    two.push_back(ns / lines);
  // The same passes on core A alone.
  for (int blk = 0; blk < o.blocks; ++blk) {
    const auto t0 = clock_type::now();
    for (int r = 0; r < 2 * passes; ++r)
      pass(buf.data(), n);
    const double ns = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
    one.push_back(ns / (2.0 * passes * lines));
  }
  volatile float sink = buf[n / 2];
  (void)sink;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: bench_core_to_core [--cpus=A,B] [--bytes=N>=64] [--blocks=N>0]\n");
    return 2;
  }
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  for (int c : {o.cpu_a, o.cpu_b})
    if (c < 0 || c >= cpus || o.cpu_a == o.cpu_b) {
      std::fprintf(stderr, "bench_core_to_core: --cpus needs two different CPUs of 0..%d\n",
                   cpus - 1);
      return 2;
    }
  if (!pin(o.cpu_a)) {
    std::fprintf(stderr, "bench_core_to_core: cannot pin to CPU %d\n", o.cpu_a);
    return 1;
  }
  const auto pp = ping_pong(o, 200000);
  std::vector<double> two, one;
  handover(o, 20, two, one);
  std::printf("cpus=%d,%d pingpong_ns=%.1f handover_ns_per_line=%.2f local_ns_per_line=%.2f "
              "bytes=%zu\n",
              o.cpu_a, o.cpu_b, median(pp), median(two), median(one), o.bytes);
  return 0;
}
