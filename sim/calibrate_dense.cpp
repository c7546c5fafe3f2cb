#include "sim/calibrate_dense.hpp"
#include "sim/calibrate_timing.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <pthread.h>
#include <sched.h>

namespace runtime::calibrate_detail {

namespace {

// Pins the calling thread to `cpu`; false when the system refuses.
bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

} // namespace

std::vector<int> allowed_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set))
        out.push_back(c);
  return out;
}

std::vector<float> dense_work::initial(const train_config& cfg, const model::dlrm& net) {
  model::float_buffer init(net.layout().size());
  model::init_dense(net.layout(), init.data(), cfg.train.seed);
  return std::vector<float>(init.begin(), init.end());
}

double dense_work::passes(std::size_t times) {
  model::workspace ws;
  model::float_buffer grads(replica_.size()), grad_unique;
  const auto t0 = wall::now();
  for (std::size_t k = 0; k < times * batches_.size(); ++k) {
    const std::size_t i = k % batches_.size();
    const auto& b = batches_[i];
    grad_unique.resize(rows_[i].index.unique().size() * cfg_.arch.dim);
    net_.forward_backward(replica_.params(), b.dense.data(), rows_[i].input(), b.labels.data(),
                          b.size, ws, grads.data(), grad_unique.data());
    replica_.apply_dense(cfg_.train.dense, grads.data());
  }
  return since(t0);
}

// sim.core-contention: a Hogwild step's time while `threads` threads step
// one shared replica at once (each with its own workspace, on the same
// batches' rows), over its time alone on the fastest CPU. Thread t is
// pinned to the t-th CPU this process may use (else two new threads may
// share a CPU for a while and measure the kernel's placement, not the
// cores). A pass is three times over the batches; each round times one
// thread alone on every CPU in turn, then all together: the threads' mean
// time over the fastest alone time (a VM's CPUs need not run at one speed:
// against the first CPU alone, a slower first CPU read below 1, 0.82-0.95
// with a busy loop on CPU 0, clamped to 1); the median of seven rounds'
// ratios, and their range in `lo`, `hi`.
double measure_contention(dense_work& work, const std::vector<int>& cpus, double& lo, double& hi) {
  const std::size_t threads = cpus.size();
  std::vector<double> ratios;
  for (int round = 0; round < 7; ++round) {
    double alone = 0;
    for (std::size_t t = 0; t < threads; ++t)
      std::thread([&] { // on each CPU, alone
        pin_to(cpus[t]);
        if (round == 0)
          work.passes(3); // warm-up
        const double s = work.passes(3);
        alone = t == 0 ? s : std::min(alone, s);
      }).join();
    std::vector<double> each(threads);
    std::atomic<std::size_t> ready{0};
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        pin_to(cpus[t]);
        ready.fetch_add(1);
        while (ready.load() < threads) // start together
          std::this_thread::yield();
        each[t] = work.passes(3);
      });
    for (auto& th : pool)
      th.join();
    double mean = 0;
    for (double e : each)
      mean += e / double(threads);
    ratios.push_back(mean / alone);
  }
  std::sort(ratios.begin(), ratios.end());
  lo = ratios.front();
  hi = ratios.back();
  return std::max(1.0, ratios[3]);
}

} // namespace runtime::calibrate_detail
