// Sequential-engine throughput: the same train_step the `train` command runs,
// timed on in-memory random batches (as bench/torch_reference.py --bench does),
// next to a single-thread Eigen SGEMM peak measured in the same process.
//
// usage: bench_engine [--arch=small,dlrm-kaggle] [--batch=256] [--iterations=200]
//                     [--repeats=5] [--gemm-size=1024]
// Prints a table and, per configuration, one JSON line starting with {"bench".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "model/gemm_blocking.hpp"
#include "report/run_metrics.hpp"
#include "engine/sequential_engine.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    out.push_back(x);
  return out;
}

// Median GFLOP/s of C = A * B with square n x n float matrices, one thread.
std::vector<double> gemm_samples(int n, int repeats) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  c.noalias() = a * b; // warm-up
  std::vector<double> gflops;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = clock_type::now();
    c.noalias() = a * b;
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    gflops.push_back(2.0 * n * double(n) * n / s / 1e9);
  }
  if (c(0, 0) == 12345.0f) // keep the product observable
    std::puts("");
  return gflops;
}

// Random batches shaped like Criteo: log1p of uniform counts, uniform 64-bit
// hashes (nearly every id unique, the harsh case for the embedding path),
// Bernoulli(0.25) labels.
std::vector<data::batch> random_batches(std::size_t count, std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> counts(0, 999);
  std::bernoulli_distribution click(0.25);
  std::vector<data::batch> out(count);
  for (auto& b : out) {
    b.size = size;
    for (std::size_t i = 0; i < size * b.num_dense; ++i)
      b.dense.push_back(std::log1p(float(counts(rng))));
    for (std::size_t i = 0; i < size * b.num_cat; ++i)
      b.cat.push_back(rng());
    for (std::size_t i = 0; i < size; ++i)
      b.labels.push_back(click(rng) ? 1.0f : 0.0f);
  }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  model::pin_gemm_blocking(); // the product blocking `train` uses (tools/main.cpp)
  std::string archs = "small,dlrm-kaggle", batches = "256";
  int iterations = 200, repeats = 5, gemm_n = 1024;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* k) { return a.substr(std::string(k).size()); };
    if (a.rfind("--arch=", 0) == 0)
      archs = val("--arch=");
    else if (a.rfind("--batch=", 0) == 0)
      batches = val("--batch=");
    else if (a.rfind("--iterations=", 0) == 0)
      iterations = std::stoi(val("--iterations="));
    else if (a.rfind("--repeats=", 0) == 0)
      repeats = std::stoi(val("--repeats="));
    else if (a.rfind("--gemm-size=", 0) == 0)
      gemm_n = std::stoi(val("--gemm-size="));
    else {
      std::fprintf(stderr, "bench_engine: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  const auto gemm = gemm_samples(gemm_n, std::max(repeats, 3));
  const double peak = median(gemm);
  std::printf("Eigen SGEMM %dx%dx%d, 1 thread: median %.1f GFLOP/s (min %.1f, max %.1f)\n",
              gemm_n, gemm_n, gemm_n, peak, *std::min_element(gemm.begin(), gemm.end()),
              *std::max_element(gemm.begin(), gemm.end()));
  std::printf("{\"bench\":\"gemm\",\"n\":%d,\"gflops_median\":%.3f}\n", gemm_n, peak);
  std::printf("%-12s %6s %12s %12s %12s %9s %9s\n", "arch", "batch", "ex/s median", "ex/s min",
              "ex/s max", "GFLOP/s", "% peak");
  for (const auto& arch : split(archs)) {
    for (const auto& bstr : split(batches)) {
      runtime::train_config cfg;
      auto a = model::preset(arch);
      if (!a) {
        std::fprintf(stderr, "bench_engine: unknown arch '%s'\n", arch.c_str());
        return 2;
      }
      cfg.arch = *a;
      cfg.arch_name = arch;
      const std::size_t bs = std::stoul(bstr);
      runtime::sequential_engine engine(cfg);
      auto data = random_batches(16, bs, 7);
      model::ne_accumulator ne;
      for (int w = 0; w < 10; ++w)
        engine.train_step(data[w % data.size()], ne);
      std::vector<double> rates;
      for (int r = 0; r < repeats; ++r) {
        const auto t0 = clock_type::now();
        for (int it = 0; it < iterations; ++it)
          engine.train_step(data[it % data.size()], ne);
        const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
        rates.push_back(double(iterations) * double(bs) / s);
      }
      const double med = median(rates);
      const double gf = med * engine.net().flops_per_example() / 1e9;
      std::printf("%-12s %6zu %12.0f %12.0f %12.0f %9.2f %8.1f%%\n", arch.c_str(), bs, med,
                  *std::min_element(rates.begin(), rates.end()),
                  *std::max_element(rates.begin(), rates.end()), gf, 100.0 * gf / peak);
      std::printf("{\"bench\":\"engine\",\"arch\":\"%s\",\"batch_size\":%zu,"
                  "\"examples_per_second_median\":%.1f,\"examples_per_second_min\":%.1f,"
                  "\"examples_per_second_max\":%.1f,\"gflops\":%.3f,\"gemm_peak_gflops\":%.3f,"
                  "\"flops_per_example\":%.0f}\n",
                  arch.c_str(), bs, med, *std::min_element(rates.begin(), rates.end()),
                  *std::max_element(rates.begin(), rates.end()), gf, peak,
                  engine.net().flops_per_example());
    }
  }
  return 0;
}
