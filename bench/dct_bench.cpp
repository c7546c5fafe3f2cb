// DCT codec throughput on one core (issue 13): estimate_threshold, threshold,
// encode, decode and scatter_add over a dense vector, in GB/s of the dense
// input (4 bytes per entry) per core, against a memcpy of the same vector
// measured in the same run. Medians of --repeats runs of each stage. The
// threshold pass is also timed as it was before its block-mask rewrite.
//
// usage: bench_dct [--repeats=31] [--sizes=29184,1048576] [--keeps=0.1,0.01,0.001]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/dct_codec.hpp"

namespace {

template <class T>
std::vector<T> parse_list(const std::string& s) {
  std::vector<T> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    out.push_back(T(std::stod(item)));
  return out;
}

// The baseline the library's threshold() replaced (a branch per entry),
// timed in the same run for the ratio.
void branchy_threshold(const float* x, std::size_t n, float tau, model::sparse_vector& out) {
  out.size = std::uint32_t(n);
  out.index.clear();
  out.value.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != 0.0f && std::fabs(x[i]) >= tau) {
      out.index.push_back(std::uint32_t(i));
      out.value.push_back(x[i]);
    }
}

// Median seconds of `repeats` calls of f.
template <class F>
double median_seconds(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::nth_element(t.begin(), t.begin() + repeats / 2, t.end());
  return t[std::size_t(repeats / 2)];
}

} // namespace

int main(int argc, char** argv) {
  int repeats = 31;
  std::vector<std::size_t> sizes{29184, 1048576};
  std::vector<double> keeps{0.1, 0.01, 0.001};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const char* k) {
      const std::string p = std::string(k) + "=";
      return a.rfind(p, 0) == 0 ? a.substr(p.size()) : std::string();
    };
    if (auto v = val("--repeats"); !v.empty())
      repeats = std::max(1, std::stoi(v));
    else if (auto v = val("--sizes"); !v.empty())
      sizes = parse_list<std::size_t>(v);
    else if (auto v = val("--keeps"); !v.empty())
      keeps = parse_list<double>(v);
    else {
      std::fprintf(stderr, "bench_dct: unknown argument '%s' (expected --repeats=, --sizes=, "
                           "--keeps=)\n", argv[i]);
      return 2;
    }
  }
  std::printf("| entries | keep | memcpy GB/s | estimate | threshold | threshold, one branch per "
              "entry | encode | decode | scatter_add | all five | all / memcpy |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (auto n : sizes) {
    std::mt19937 g(1);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(n), copy(n), dst(n, 0.0f);
    for (auto& v : x)
      v = d(g);
    const double gb = 4.0 * double(n) / 1e9;
    const double mc = median_seconds(repeats, [&] { std::memcpy(copy.data(), x.data(), 4 * n); });
    for (double keep : keeps) {
      float tau = 0;
      model::sparse_vector s, back;
      std::vector<std::uint8_t> bytes;
      const double te = median_seconds(repeats, [&] { tau = model::estimate_threshold(x.data(), n, keep); });
      const double tt = median_seconds(repeats, [&] { model::threshold(x.data(), n, tau, s); });
      const double tb = median_seconds(repeats, [&] { branchy_threshold(x.data(), n, tau, s); });
      const double tc = median_seconds(repeats, [&] { bytes = model::encode(s); });
      const double td = median_seconds(repeats, [&] {
        if (model::decode(bytes.data(), bytes.size(), std::uint32_t(n), back))
          std::abort();
      });
      const double ts = median_seconds(repeats, [&] { model::scatter_add(back, dst.data()); });
      const double all = te + tt + tc + td + ts;
      std::printf("| %zu | %g | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                  n, keep, gb / mc, gb / te, gb / tt, gb / tb, gb / tc, gb / td, gb / ts, gb / all,
                  mc / all);
    }
  }
  return 0;
}
